"""A first load (`connection.begin_first_load`): group imports into a ledger that holds no session
yet run with a rollback journal, each page written once, and the ledger is back in WAL mode when
the run finishes; a load that cannot have the file to itself, or a ledger that holds sessions,
stays in WAL mode with checkpoints beside the writer; a load killed midway leaves a ledger the
next connection rolls back to its last commit."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from tests.store.factory import batch, item
from tracehouse.store.protocol import RunTotals
from tracehouse.store.sqlite.store import SqliteStore


def _journal(store: SqliteStore) -> str:
    return str(store.conn.execute("PRAGMA journal_mode").fetchone()[0])


def _load(store: SqliteStore, first: int, count: int) -> str:
    """A group of `count` sessions; the journal mode it ran in."""
    with store.import_group() as write:
        for n in range(first, first + count):
            assert write(batch([item(f"s{n}", 10, text=f"words of session {n} " * 40)])).ok
        return _journal(store)


def _checkpoint_threads() -> int:
    return [t.name for t in threading.enumerate()].count("ledger-checkpoint")


def test_an_empty_ledger_is_loaded_with_a_rollback_journal_and_left_in_wal_mode(tmp_path: Path):
    path = tmp_path / "ledger.db"
    store = SqliteStore(path)
    try:
        store.start_run("run-1", "backfill")
        assert _load(store, 0, 20) == "truncate"
        assert _load(store, 20, 20) == "truncate"  # the whole run, not only its first group
        assert _checkpoint_threads() == 0
        assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
        store.finish_run("run-1", RunTotals())
        assert _journal(store) == "wal"
        # The next run finds sessions: WAL mode, and checkpoints beside the writer.
        store.start_run("run-2", "backfill")
        assert _load(store, 40, 5) == "wal"
        assert _checkpoint_threads() == 1
        store.finish_run("run-2", RunTotals())
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (45,)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        hits = conn.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'session'"
        ).fetchone()
        assert hits == (450,)  # the search index kept up with the load


def test_a_ledger_holding_sessions_is_loaded_in_wal_mode(tmp_path: Path):
    store = SqliteStore(tmp_path / "ledger.db")
    try:
        assert store.import_batch(batch([item("already")])).ok
        assert _load(store, 0, 3) == "wal"
    finally:
        store.close()


def test_a_load_stays_in_wal_mode_while_another_connection_has_the_ledger_open(tmp_path: Path):
    """A gateway or a search that has the ledger open keeps reading while the load commits."""
    path = tmp_path / "ledger.db"
    store = SqliteStore(path)
    reader = sqlite3.connect(path)
    try:
        assert reader.execute("SELECT count(*) FROM sessions").fetchone() == (0,)
        assert _load(store, 0, 3) == "wal"
        assert reader.execute("SELECT count(*) FROM sessions").fetchone() == (3,)
    finally:
        reader.close()
        store.close()


def test_a_first_load_killed_midway_rolls_back_to_its_last_commit(tmp_path: Path):
    """Killed inside its second group, after the page cache spilled into the file: the next
    store to open the ledger rolls the hot journal back and finds the first group whole."""
    path = tmp_path / "ledger.db"
    script = textwrap.dedent(
        f"""
        import os
        from pathlib import Path
        from tests.store.factory import batch, item
        from tracehouse.store.sqlite.store import SqliteStore

        store = SqliteStore(Path({str(path)!r}))
        with store.import_group() as write:
            for n in range(10):
                write(batch([item(f"s{{n}}", 5)]))
        store.conn.execute("PRAGMA cache_size = 20")  # pages spill into the file mid-group
        with store.import_group() as write:
            for n in range(10, 60):
                write(batch([item(f"s{{n}}", 20, text="a long text of words " * 200)]))
            assert Path({str(path)!r} + "-journal").stat().st_size > 0
            os._exit(9)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2])
    assert done.returncode == 9
    store = SqliteStore(path)
    try:
        assert _journal(store) == "wal"
        sessions = store.conn.execute("SELECT count(*) FROM sessions").fetchone()
        assert sessions == (10,)
        assert store.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        store.close()
