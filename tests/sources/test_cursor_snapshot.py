"""The snapshot a watcher keeps of a Cursor database in WAL mode: refreshed from the `-wal`
alone while that is sound, and always the same rows as the database itself."""

from __future__ import annotations

import importlib
import os
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tracehouse.parsers.kit.sqlite_snapshot import snapshot

snapshot_module = importlib.import_module("tracehouse.parsers.kit.sqlite_snapshot")


def wal_db(path: Path) -> sqlite3.Connection:
    """A writer that checkpoints only when told, as the test's operations say."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB)")
    return conn


def rows(conn: sqlite3.Connection) -> list[tuple[str, bytes]]:
    return conn.execute("SELECT key, value FROM kv ORDER BY key").fetchall()


def seen(path: Path, keep_in: str | None) -> list[tuple[str, bytes]]:
    with snapshot(str(path), keep_in) as conn:
        return rows(conn)


def count_full_copies(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    copies: list[str] = []
    real = snapshot_module._copy_consistent

    def counted(path: str, into: str) -> tuple[str, str]:
        copies.append(path)
        return real(path, into)

    monkeypatch.setattr(snapshot_module, "_copy_consistent", counted)
    return copies


def test_new_frames_are_read_from_the_wal_alone(tmp_path, monkeypatch):
    copies = count_full_copies(monkeypatch)
    path, keep = tmp_path / "state.vscdb", str(tmp_path / "kept")
    writer = wal_db(path)
    writer.executemany("INSERT INTO kv VALUES (?, ?)", [(f"k{i}", b"v" * 500) for i in range(50)])
    assert seen(path, keep) == rows(writer)
    for n in range(3):  # appended transactions: the database file is not touched
        writer.execute("INSERT INTO kv VALUES (?, ?)", (f"new{n}", b"w" * 500))
        assert seen(path, keep) == rows(writer)
    assert len(copies) == 1
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the database file changes: copied again
    writer.execute("INSERT INTO kv VALUES ('after', 'x')")
    assert seen(path, keep) == rows(writer)
    assert len(copies) == 2
    writer.close()


def test_a_restarted_wal_is_caught_even_when_the_mtime_does_not_move(tmp_path, monkeypatch):
    """A checkpoint and a WAL restart within one tick of a coarse clock: the database file's
    stat looks the same, but the WAL's salts do not."""
    copies = count_full_copies(monkeypatch)
    path, keep = tmp_path / "state.vscdb", str(tmp_path / "kept")
    writer = wal_db(path)
    writer.executemany(
        "INSERT INTO kv VALUES (?, ?)", [(f"k{i:03d}", b"a" * 900) for i in range(80)]
    )
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert seen(path, keep) == rows(writer)
    before = os.stat(path)
    writer.execute(
        "UPDATE kv SET value = ? WHERE key < 'k010'", (b"b" * 900,)
    )  # pages at the start
    writer.execute("PRAGMA wal_checkpoint(RESTART)")  # into the database; the next write restarts
    writer.execute("UPDATE kv SET value = ? WHERE key >= 'k070'", (b"c" * 900,))  # pages at the end
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    assert seen(path, keep) == rows(writer)
    assert len(copies) == 2
    writer.close()


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.integers(1, 40)),
        st.tuples(st.just("update"), st.integers(0, 60)),
        st.tuples(st.just("delete"), st.integers(0, 60)),
        st.tuples(st.just("checkpoint"), st.sampled_from(["PASSIVE", "RESTART", "TRUNCATE"])),
        st.tuples(st.just("reopen"), st.just(0)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None)
@given(OPERATIONS)
def test_the_kept_snapshot_always_equals_the_database(operations):
    with tempfile.TemporaryDirectory() as tmp:
        path, keep = Path(tmp) / "state.vscdb", os.path.join(tmp, "kept")
        writer, n = wal_db(path), 0
        for op, arg in operations:
            if op == "insert":
                writer.executemany(
                    "INSERT INTO kv VALUES (?, ?)",
                    [(f"k{n + i:04d}", os.urandom(300)) for i in range(arg)],
                )
                n += arg
            elif op == "update":
                writer.execute(
                    "UPDATE kv SET value = ? WHERE key = ?", (os.urandom(300), f"k{arg:04d}")
                )
            elif op == "delete":
                writer.execute("DELETE FROM kv WHERE key = ?", (f"k{arg:04d}",))
            elif op == "checkpoint":
                writer.execute(f"PRAGMA wal_checkpoint({arg})")
            else:  # Cursor quits and starts again: the last connection folds and deletes the WAL
                writer.close()
                writer = wal_db(path)
            assert seen(path, keep) == rows(writer)
        writer.close()


def _modes(root: str) -> list[tuple[str, int]]:
    found = [(root, os.stat(root).st_mode & 0o777)]
    for folder, dirs, files in os.walk(root):
        found += [(os.path.join(folder, n), os.stat(os.path.join(folder, n)).st_mode & 0o777)
                  for n in dirs + files]  # fmt: skip
    return found


def test_copies_are_private_to_their_owner(tmp_path, monkeypatch):
    """A copy holds Cursor's auth tokens too: 0700 directories, 0600 files, whatever the umask."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", None)
    db = tmp_path / "state.vscdb"
    writer = wal_db(db)
    writer.execute("INSERT INTO kv VALUES ('a', x'01')")
    old = os.umask(0o022)
    try:
        with snapshot(str(db)) as conn:
            (copy_dir,) = [str(p) for p in (tmp_path / "tmp").iterdir()]
            modes = _modes(copy_dir)
            assert rows(conn) == [("a", b"\x01")]
        kept = tmp_path / "kept"
        kept.mkdir(mode=0o755)
        seen(db, str(kept))
        modes += _modes(str(kept))[1:]  # the caller's own directory is the caller's to set
    finally:
        os.umask(old)
    assert modes and all(
        mode == (0o700 if os.path.isdir(path) else 0o600)
        for path, mode in modes
        if os.path.exists(path)
    ), modes
    assert not list((tmp_path / "tmp").iterdir())  # removed on exit


def test_any_run_removes_the_copies_a_killed_run_left(tmp_path, monkeypatch):
    import subprocess
    import sys

    from tracehouse.pipeline.options import SyncOptions
    from tracehouse.pipeline.sync import sync
    from tracehouse.store import open_store

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", None)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    left = tmp_path / "tmp" / f"tracehouse-scratch-{ended.pid}-x1y2"
    left.mkdir(parents=True)
    (left / "state.vscdb").write_bytes(b"a copy with tokens in it")
    store = open_store(str(tmp_path / "ledger.db"))
    try:
        sync(store, SyncOptions(sources={"cursor": [tmp_path / "no-cursor-here"]}))
    finally:
        store.close()
    assert not left.exists()


def test_a_database_mid_transaction_in_rollback_mode_reads_as_last_committed(tmp_path):
    """The writer has spilled uncommitted pages into the file and holds a journal: the private
    copy's journal is hot, and rolling it back shows exactly the committed rows."""
    path = tmp_path / "state.vscdb"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB)")
    writer.execute("INSERT INTO kv VALUES ('committed', x'00')")
    writer.execute("PRAGMA cache_size=1")  # spill pages to the database file before the commit
    writer.execute("BEGIN IMMEDIATE")
    writer.executemany("INSERT INTO kv VALUES (?, ?)", [(f"u{i}", b"u" * 500) for i in range(500)])
    assert os.path.exists(str(path) + "-journal")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert seen(path, None) == [("committed", b"\x00")]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # the source untouched
    writer.execute("COMMIT")


def test_a_database_switching_to_wal_reads_as_last_committed(tmp_path):
    """`PRAGMA journal_mode=WAL` writes the WAL header into the file and then deletes the
    journal that commits it: for that instant the header says WAL beside a hot journal. The
    copy's journal is rolled back as any other (a read-only open refused it)."""
    path = tmp_path / "state.vscdb"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB)")
    writer.execute("INSERT INTO kv VALUES ('committed', x'00')")
    writer.execute("PRAGMA cache_size=1")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE more (x)")  # page 1 is in the journal
    writer.executemany("INSERT INTO kv VALUES (?, ?)", [(f"u{i}", b"u" * 500) for i in range(500)])
    with open(path, "r+b") as f:  # the header as the switch to WAL leaves it
        f.seek(18)
        f.write(b"\x02\x02")
    assert os.path.exists(str(path) + "-journal")
    assert seen(path, None) == [("committed", b"\x00")]
    keep = tmp_path / "keep"  # a watcher's kept copy: read the same, and not kept rolled back
    assert seen(path, str(keep)) == [("committed", b"\x00")]
    assert not list(keep.rglob("copied-from"))
    writer.execute("ROLLBACK")


def test_a_journal_that_appears_mid_read_is_waited_for():
    error = sqlite3.OperationalError("attempt to write a readonly database")
    error.sqlite_errorname = "SQLITE_READONLY_ROLLBACK"  # type: ignore[attr-defined]
    assert snapshot_module._busy(error) == "source database mid-write"
    other = sqlite3.OperationalError("attempt to write a readonly database")
    other.sqlite_errorname = "SQLITE_READONLY_RECOVERY"  # type: ignore[attr-defined]
    assert snapshot_module._busy(other) is None
