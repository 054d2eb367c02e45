"""Checkpoints beside the writer (`store/sqlite/checkpointer.py`): once a group import has run
on a ledger that holds sessions, each commit is copied from the WAL into the ledger by a thread
of its own, never by the commit. An empty ledger is loaded with a rollback journal instead
(`test_first_load.py`)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from tests.store.factory import batch, item
from tracehouse.store.sqlite import connection
from tracehouse.store.sqlite import store as sqlite_store
from tracehouse.store.sqlite.store import SqliteStore


def _group(store: SqliteStore, first: int, count: int) -> None:
    with store.import_group() as write:
        for n in range(first, first + count):
            assert write(batch([item(f"s{n}", 20, text=f"words of session {n} " * 50)])).ok


def _holding_a_session(path: Path) -> SqliteStore:
    """A store whose ledger is not empty: its group imports run in WAL mode."""
    store = SqliteStore(path)
    assert store.import_batch(batch([item("first")])).ok
    return store


def _wait_for(condition, seconds: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_commits_are_checkpointed_in_the_background(tmp_path: Path):
    path = tmp_path / "ledger.db"
    store = _holding_a_session(path)
    try:
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        before = path.stat().st_size
        _group(store, 0, 30)
        assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
        # The ledger file grows while the store is open: the thread copied the WAL into it.
        assert _wait_for(lambda: path.stat().st_size > before)
        assert _wait_for(lambda: store.timings["checkpoint"] > 0)
        _group(store, 30, 5)  # later groups reuse the same thread
        assert [t.name for t in threading.enumerate()].count("ledger-checkpoint") == 1
    finally:
        store.close()
    assert "ledger-checkpoint" not in [t.name for t in threading.enumerate()]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (36,)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_reader_sees_every_commit_while_checkpoints_run(tmp_path: Path):
    path = tmp_path / "ledger.db"
    store = _holding_a_session(path)
    reader = sqlite3.connect(path)
    try:
        for n in range(5):
            _group(store, n * 4, 4)
            count = reader.execute("SELECT count(*) FROM sessions").fetchone()[0]
            assert count == (n + 1) * 4 + 1
    finally:
        reader.close()
        store.close()


def test_a_group_import_takes_a_larger_page_cache_only_where_the_writer_is_the_wall(
    tmp_path: Path, monkeypatch
):
    """On 4 cores or more the writer is the wall and gets GROUP_CACHE_KIB; on 2, where parsing
    is, it takes a smaller cache than an ordinary connection's, and the memory stays free."""
    assert sqlite_store.FEW_CORES_GROUP_CACHE_KIB < connection.CACHE_KIB
    for cores, expected in (
        (2, -sqlite_store.FEW_CORES_GROUP_CACHE_KIB),
        (16, -sqlite_store.GROUP_CACHE_KIB),
    ):
        monkeypatch.setattr(sqlite_store.os, "cpu_count", lambda cores=cores: cores)
        store = SqliteStore(tmp_path / f"ledger-{cores}.db")
        try:
            _group(store, 0, 1)
            assert store.conn.execute("PRAGMA cache_size").fetchone() == (expected,)
        finally:
            store.close()
