"""The SQLite search indexes merge their segments in steps as writes come, never a whole level at
once in the write that adds its sixteenth segment (`sqlite_index.TUNING`, migration m021)."""

from __future__ import annotations

from pathlib import Path

from tests.store.factory import batch, item
from tracehouse.search import sqlite_index
from tracehouse.store.sqlite.migrations import RECORD_TABLE
from tracehouse.store.sqlite.store import SqliteStore


def _config(store: SqliteStore, index: str) -> dict[str, int]:
    return dict(store.conn.execute(f"SELECT k, v FROM {index}_config").fetchall())


def _segments_after_each_import(store: SqliteStore, n: int) -> list[int]:
    counts = []
    for i in range(n):
        assert store.import_batch(batch([item(f"s{i}", 3, text=f"word{i} alpha beta")])).ok
        counts.append(
            store.conn.execute("SELECT count(DISTINCT segid) FROM messages_fts_idx").fetchone()[0]
        )
    return counts


def test_a_new_ledger_and_an_upgraded_one_keep_the_tuning(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "ledger.db")
    for index in sqlite_index.INDEXES:
        assert _config(store, index.name)["crisismerge"] == 64
    # A ledger of schema 20: the default crisis merge, and m021 not applied.
    for index in sqlite_index.INDEXES:
        store.conn.execute(f"DELETE FROM {index.name}_config WHERE k = 'crisismerge'")
    store.conn.execute(f"DELETE FROM {RECORD_TABLE} WHERE name = 'm021_search_merges_by_steps'")
    store.conn.commit()
    store.close()
    store = SqliteStore(tmp_path / "ledger.db")
    try:
        for index in sqlite_index.INDEXES:
            assert _config(store, index.name) == dict(sqlite_index.TUNING) | {"version": 4}
    finally:
        store.close()


def test_the_sixteenth_segment_does_not_merge_the_level_at_once(tmp_path: Path) -> None:
    """One import a transaction, one segment each: they stay segments (to be merged in steps
    by the writes that follow), where the default crisis merge collapses all sixteen into one
    in the sixteenth import."""
    store = SqliteStore(tmp_path / "ledger.db")
    try:
        assert _segments_after_each_import(store, 20) == list(range(1, 21))
    finally:
        store.close()
    control = SqliteStore(tmp_path / "control.db")
    try:
        control.conn.execute(
            "INSERT INTO messages_fts (messages_fts, rank) VALUES ('crisismerge', 16)"
        )
        assert _segments_after_each_import(control, 17)[14:] == [15, 1, 2]
    finally:
        control.close()
