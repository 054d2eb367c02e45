"""Reading an agent's SQLite database while the agent runs, without writing to it or beside it
(DESIGN §5): Cursor's `state.vscdb`, OpenCode's `opencode.db`, the Cursor agent's `store.db`.

* A database in rollback-journal mode with no journal beside it is read in place through a
  read-only connection (`mode=ro`): a reader takes only a shared lock, which changes no byte.
* A database in WAL mode, or with a hot journal, is copied — `-shm`, then the database, then the
  `-wal` (or `-journal`) — into a private temporary directory, and the copy is opened. The copy is
  kept only if the database file did not change while it was copied (a checkpoint would have
  moved pages between the two files); otherwise it is taken again. A `-wal` that grew meanwhile
  is fine: SQLite ignores a trailing frame that is incomplete.
  `mode=ro` is not used on the user's WAL database, because a reader writes its read marks into
  `-shm`, nor is `immutable=1`, which ignores the WAL. A private copy of a WAL database is opened
  `mode=ro`; a private copy taken with a `-journal` (even beside a WAL header: a database
  switching to WAL has both for an instant) is opened read-write, because the copied journal is
  hot (no writer holds the copy's lock) and SQLite must roll it back to show the last
  committed state — a read-only connection refuses with `SQLITE_READONLY_ROLLBACK`.

A long-running reader (`sync live`) passes a private directory of its own to keep the copy in:
while neither the database file (inode, size, mtime) nor the WAL header (salts) changed, only
the `-wal` is copied again. That is sound because the kept pages can only go stale through a
checkpoint that is followed by a WAL restart, and a restart writes new salts.

`SQLITE_BUSY` is retried with backoff and reported only when it persists, and so is
`SQLITE_READONLY_ROLLBACK` on a database read in place: a writer that began while the reader
looked (or switched the database to WAL) leaves, for an instant, a journal the reader cannot
tell from a hot one; the next try sees the writer's lock or no journal.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import quote

import xxhash

from tracehouse import retrying
from tracehouse.parsers.base import file_stat
from tracehouse.state import scratch as scratch_space

BACKOFF = retrying.Backoff(attempts=10, first=0.05, most=0.5)
SIDE_FILES = ("-wal", "-journal")


class SnapshotError(Exception):
    """The database could not be read consistently; the message says why."""


def signature(path: str) -> dict[str, list[int] | None]:
    """What a stat says of the database and its side files: unchanged means nothing to read."""
    return {suffix or "db": file_stat(path + suffix) for suffix in ("", *SIDE_FILES)}


def _wal_mode(path: str) -> bool:
    """Header bytes 18 and 19 are 2 in a WAL database (1 in rollback mode)."""
    with open(path, "rb") as f:
        header = f.read(20)
    return len(header) == 20 and header[18] == 2


@contextmanager
def snapshot(path: str, keep_in: str | None = None) -> Iterator[sqlite3.Connection]:
    """A connection to a consistent, private view of the database at `path`. With `keep_in`
    (a directory the caller owns), a copy is kept there and refreshed from the `-wal` alone
    while that is sound (`_refresh_kept`)."""
    try:
        wal = _wal_mode(path)
        in_place = not wal and not any(os.path.exists(path + s) for s in SIDE_FILES)
    except OSError as exc:
        raise SnapshotError(exc.strerror or str(exc)) from None
    with ExitStack() as cleanup:
        if in_place:
            target = path
        elif wal and keep_in is not None:
            target = _refresh_kept(path, keep_in)
        else:
            private = cleanup.enter_context(scratch_space.private_dir())
            target, _ = _copy_consistent(path, private)
        # A copy of a WAL database is opened read-only too: closing then does not fold the copied
        # WAL into it, which would write the WAL's size again on every read and change the kept
        # pages. A copied journal must be rolled back, which takes a read-write connection: a
        # copy taken as the database switched to WAL holds one beside a header that says WAL
        # already (the switch writes the header, then deletes the journal that commits it).
        roll_back = not in_place and (not wal or os.path.exists(target + "-journal"))
        conn = _open(target, roll_back=roll_back)
        try:
            yield conn
        finally:
            conn.close()


def _refresh_kept(path: str, keep_in: str) -> str:
    """The kept copy of `path`, brought up to date: the `-wal` alone if neither the database
    file nor the WAL's header changed since the copy was taken, everything otherwise. Only a
    checkpoint followed by a WAL restart makes kept pages stale, and a restart writes a new
    header (new salts), so the header catches what a coarse mtime might not."""
    private = os.path.join(keep_in, xxhash.xxh64_hexdigest(os.fsencode(os.path.abspath(path))))
    copy = os.path.join(private, os.path.basename(path))
    record = os.path.join(private, "copied-from")
    try:
        with open(record, encoding="ascii") as f:
            copied_from = f.read()
    except OSError:
        copied_from = ""
    if copied_from and os.path.exists(copy):
        identity = _identity(path)
        for suffix in ("-shm", "-wal"):  # the -shm is rebuilt from the WAL on open
            Path(copy + suffix).unlink(missing_ok=True)
        _copy_if_there(path + "-wal", copy + "-wal")
        if f"{identity}|{_wal_header(copy)}" == copied_from and _identity(path) == identity:
            return copy
    scratch_space.make_private_dirs(private)
    for stale in (record, *(copy + s for s in ("-shm", *SIDE_FILES))):
        Path(stale).unlink(missing_ok=True)  # a copy cut short is never taken for a good one
    copy, identity = _copy_consistent(path, private)
    # A copy with a journal (the database was switching to WAL) is rolled back when opened: its
    # pages are then no longer the database's, so it is not kept, and the next read copies anew.
    if not os.path.exists(copy + "-journal"):
        scratch_space.write_private(record, f"{identity}|{_wal_header(copy)}")
    return copy


def _wal_header(copy: str) -> str:
    """Magic, format, page size, checkpoint sequence and salts of the copied WAL."""
    try:
        with open(copy + "-wal", "rb") as f:
            return f.read(24).hex()
    except OSError:
        return ""


def _identity(path: str) -> str:
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def _open(path: str, roll_back: bool = False) -> sqlite3.Connection:
    """A connection that runs no writing statement; with `roll_back` (a private copy only) it may
    still roll back a hot journal."""
    uri = f"file:{quote(os.path.abspath(path))}?mode={'rw' if roll_back else 'ro'}"
    conn = sqlite3.connect(uri, uri=True, timeout=0.5, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    # One invalid UTF-8 byte in one stored value must not make the whole query, and so every
    # composer of the database, unreadable: such text is decoded with replacement characters,
    # as JSONL lines are (FORMATS §4.7).
    conn.text_factory = _lenient_text
    return conn


def _lenient_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _copy_consistent(path: str, into: str) -> tuple[str, str]:
    """The copy's path, and the identity of the database file it was copied from."""
    target = os.path.join(into, os.path.basename(path))

    def once() -> tuple[str, str]:
        before = _identity(path)
        for suffix in ("-shm", "", *SIDE_FILES):
            _copy_if_there(path + suffix, target + suffix)
        if _identity(path) != before:
            for suffix in ("-shm", "", *SIDE_FILES):
                Path(target + suffix).unlink(missing_ok=True)
            raise _Changed
        return target, before

    try:
        return retrying.call(once, reason=_changed, backoff=BACKOFF)
    except _Changed:
        raise SnapshotError(
            f"kept changing while it was copied ({BACKOFF.attempts} tries); try again"
        ) from None


def _copy_if_there(source: str, target: str) -> None:
    with suppress(FileNotFoundError):
        scratch_space.copy_private(source, target)


def read(
    conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()
) -> list[tuple[Any, ...]]:
    """One short read, retried with backoff while a writer holds the database."""
    try:
        return retrying.call(
            lambda: conn.execute(sql, params).fetchall(), reason=_busy, backoff=BACKOFF
        )
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        # The extended code (SQLITE_READONLY_RECOVERY, …) says which rule the read broke.
        code = getattr(exc, "sqlite_errorname", None)
        raise SnapshotError(f"{exc}" + (f" ({code})" if code else "")) from None


def require_tables(conn: sqlite3.Connection, names: tuple[str, ...], what: str) -> None:
    """SnapshotError unless the database holds one of the tables `names`: an empty database, or
    another program's, is a reject that says so rather than a unit that imports nothing."""
    found = {n for (n,) in read(conn, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not found & set(names):
        raise SnapshotError(f"holds no {' or '.join(names)} table: not {what}")


class _Changed(Exception):
    """The database file changed while it was copied."""


def _changed(exc: BaseException) -> str | None:
    return "changed while copied" if isinstance(exc, _Changed) else None


def _busy(exc: BaseException) -> str | None:
    if not isinstance(exc, sqlite3.OperationalError):
        return None
    if "locked" in str(exc) or "busy" in str(exc):
        return "source database busy"
    if getattr(exc, "sqlite_errorname", None) == "SQLITE_READONLY_ROLLBACK":
        return "source database mid-write"
    return None
