"""Reading a `state.vscdb` while Cursor runs, without writing to it or beside it (DESIGN §5).

* A database in rollback-journal mode with no journal beside it is read in place through a
  read-only connection (`mode=ro`): a reader takes only a shared lock, which changes no byte.
* A database in WAL mode, or with a hot journal, is copied — `-shm`, then the database, then the
  `-wal` (or `-journal`) — into a private temporary directory, and the copy is opened. The copy is
  kept only if the database file did not change while it was copied (a checkpoint would have
  moved pages between the two files); otherwise it is taken again. A `-wal` that grew meanwhile
  is fine: SQLite ignores a trailing frame that is incomplete.
  `mode=ro` is not used on a WAL database, because a reader writes its read marks into `-shm`,
  nor is `immutable=1`, which ignores the WAL.

`SQLITE_BUSY` is retried with backoff and reported only when it persists.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import quote

ATTEMPTS = 10
SIDE_FILES = ("-wal", "-journal")


class SnapshotError(Exception):
    """The database could not be read consistently; the message says why."""


def signature(path: str) -> dict[str, list[int] | None]:
    """What a stat says of the database and its side files: unchanged means nothing to read."""
    out: dict[str, list[int] | None] = {}
    for suffix in ("", *SIDE_FILES):
        try:
            st = os.stat(path + suffix)
        except OSError:
            out[suffix or "db"] = None
            continue
        out[suffix or "db"] = [st.st_ino, st.st_size, st.st_mtime_ns]
    return out


def _wal_mode(path: str) -> bool:
    """Header bytes 18 and 19 are 2 in a WAL database (1 in rollback mode)."""
    with open(path, "rb") as f:
        header = f.read(20)
    return len(header) == 20 and header[18] == 2


@contextmanager
def snapshot(path: str) -> Iterator[sqlite3.Connection]:
    """A connection to a consistent, private view of the database at `path`."""
    try:
        in_place = not _wal_mode(path) and not any(os.path.exists(path + s) for s in SIDE_FILES)
    except OSError as exc:
        raise SnapshotError(f"cannot read: {exc.strerror or exc}") from None
    if in_place:
        conn = _open_read_only(path)
        try:
            yield conn
        finally:
            conn.close()
        return
    with tempfile.TemporaryDirectory(prefix="tracehouse-vscdb-") as private:
        copy = _copy_consistent(path, private)
        conn = sqlite3.connect(copy)  # private: SQLite may fold the copied WAL into it
        try:
            conn.execute("PRAGMA query_only = 1")
            yield conn
        finally:
            conn.close()


def _open_read_only(path: str) -> sqlite3.Connection:
    uri = f"file:{quote(os.path.abspath(path))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=0.5, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    return conn


def _copy_consistent(path: str, into: str) -> str:
    target = os.path.join(into, "state.vscdb")
    delay = 0.05
    for _ in range(ATTEMPTS):
        before = os.stat(path)
        for suffix in ("-shm", "", *SIDE_FILES):
            _copy_if_there(path + suffix, target + suffix)
        after = os.stat(path)
        if (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns):
            return target
        for suffix in ("-shm", "", *SIDE_FILES):
            Path(target + suffix).unlink(missing_ok=True)
        time.sleep(delay)
        delay = min(delay * 2, 0.5)
    raise SnapshotError(f"kept changing while it was copied ({ATTEMPTS} tries); try again")


def _copy_if_there(source: str, target: str) -> None:
    with suppress(FileNotFoundError):
        shutil.copyfile(source, target)


def read(
    conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()
) -> list[tuple[Any, ...]]:
    """One short read, retried with backoff while a writer holds the database."""
    delay = 0.05
    for attempt in range(ATTEMPTS):
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "no such table" in text:
                return []
            if ("locked" not in text and "busy" not in text) or attempt == ATTEMPTS - 1:
                raise SnapshotError(f"cannot read: {text}") from None
            time.sleep(delay)
            delay *= 2
    return []
