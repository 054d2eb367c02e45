"""How a ledger file is made and every connection to it set up: pragmas, lock waits, modes."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from tracehouse import retrying
from tracehouse.errors import StoreError

# Nine tries of `busy_timeout` each, with short waits between: about 45 s before giving up.
LOCK_BACKOFF = retrying.Backoff(attempts=9, first=0.05, most=2.0)
BUSY_TIMEOUT_MS = 5000
CACHE_KIB = 24 * 1024
PAGE_BYTES = 8192


def apply_pragmas(conn: sqlite3.Connection, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
    """How every connection to a ledger is set up (the import bench's floor uses it too)."""
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    # Only a new, empty file takes it (a ledger keeps the page size it was made with). Rows of
    # transcripts run to kilobytes: at 8 KiB pages a backfill's writer spent 7% less time than
    # at 4 KiB (fewer overflow chains and page splits); 16 KiB was no faster.
    conn.execute(f"PRAGMA page_size = {PAGE_BYTES}")
    # Turning a new file to WAL takes an exclusive lock and is refused at once, without the busy
    # timeout, while a second first run holds the file: retried as a locked transaction is.
    retrying.call(
        lambda: conn.execute("PRAGMA journal_mode = WAL"), reason=lock_reason, backoff=LOCK_BACKOFF
    )
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = OFF")
    # Ids are hashes, so inserts land all over each B-tree: a larger page cache keeps the hot
    # part of the indexes in memory during a batch. At 16 MB (4 KiB pages) a 600 MB ledger's
    # writer spilled and re-read index pages 460k times; at 32 MB, 390k times and 8% faster;
    # 64 MB, no faster. With 8 KiB pages 24 MB is as fast as 32 MB, and leaves room for the
    # journal of a batch's savepoint (writer.import_batch), which is held in memory too.
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    # Each checkpoint syncs the file: every 40 MB of WAL rather than every 4 MB makes a
    # backfill's writes ~18% faster; the size limit shrinks the WAL back afterwards.
    conn.execute("PRAGMA wal_autocheckpoint = 10000")
    conn.execute(f"PRAGMA journal_size_limit = {64 * 1024 * 1024}")


def create_private(path: Path) -> None:
    """The ledger holds whole conversations: 0600 file in a 0700 directory (DESIGN §9)."""
    try:
        if not path.parent.exists():
            path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return  # another first run created it a moment ago: the migrations' lock orders the two
    except OSError as exc:
        raise StoreError(f"{path}: cannot create the ledger ({exc.strerror})") from None
    os.close(fd)


def lock_reason(exc: BaseException) -> str | None:
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc)
        if "locked" in text or "busy" in text:
            return retrying.short(text)
    return None


def begin_first_load(conn: sqlite3.Connection) -> bool:
    """Whether the writer loads an empty ledger with a rollback journal instead of the WAL.

    In WAL mode every page is written twice: into the WAL, then by a checkpoint into the file.
    A rollback journal keeps only the old content of pages that existed before the transaction,
    and a first load's pages are nearly all new, so each is written once: on the 880 MB bench
    corpus (2 cores) the backfill took 15% less time, wrote 0.8 GB instead of 1.7 GB, and
    needed no checkpoints beside it. A crash leaves a hot journal that the next connection rolls
    back, as a crash in WAL mode leaves uncommitted frames: the watermark rule holds either way.

    The price is that readers wait while a group commits, so only a ledger that holds no session
    yet — nobody has anything to read in it — is loaded this way. Leaving WAL mode needs the file
    to itself: with another connection open (a gateway, a search) the load stays in WAL mode."""
    if conn.execute("SELECT 1 FROM sessions LIMIT 1").fetchone() is not None:
        return False
    try:
        (mode,) = conn.execute("PRAGMA journal_mode = TRUNCATE").fetchone()
    except sqlite3.OperationalError:  # busy: someone else has the ledger open
        return False
    return str(mode).lower() == "truncate"


def end_first_load(conn: sqlite3.Connection) -> None:
    """Back to WAL mode once the load's run is over. If another connection holds the file just
    then, the next connection to open it (each sets WAL mode) does it."""
    with contextlib.suppress(sqlite3.OperationalError):
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
