"""Several batches in one SQLite transaction (a sync's writer): they commit together or not at
all, and the search index holds them at the commit."""

from __future__ import annotations

import pytest

from tests.store.factory import batch, item
from tracehouse.store.sqlite.store import SqliteStore


def test_a_group_commits_its_batches_together_and_indexes_them(tmp_path):
    store = SqliteStore(tmp_path / "ledger.db")
    with store.import_group() as write:
        write(batch([item("one", 3, text="zebracrossing")]))
        write(batch([item("two", 3, text="okapiwhistle")]))
    assert store.info().row_counts["sessions"] == 2
    one, two = (store.search(word) for word in ("zebracrossing", "okapiwhistle"))
    assert one and two and {h.session_id for h in one} != {h.session_id for h in two}
    store.close()


def test_a_failing_group_leaves_nothing_of_any_of_its_batches(tmp_path):
    store = SqliteStore(tmp_path / "ledger.db")
    with pytest.raises(RuntimeError), store.import_group() as write:
        write(batch([item("one", 3)]))
        raise RuntimeError("the writer stopped")
    assert store.info().row_counts["sessions"] == 0
    assert store.query("SELECT count(*) AS n FROM watermarks")[0]["n"] == 0
    store.close()


def test_imports_keep_their_journals_in_memory_and_readers_do_not(tmp_path):
    """The per-item savepoints' sub-journals stay in memory during an import (a temporary file
    took most of the writer's writes); afterwards a reader's big sort may spill to disk again."""
    store = SqliteStore(tmp_path / "ledger.db")
    seen: list[int] = []
    with store.import_group() as write:
        seen.append(store.conn.execute("PRAGMA temp_store").fetchone()[0])
        write(batch([item("one", 3)]))
    with pytest.raises(RuntimeError), store.import_group() as write:
        raise RuntimeError("the writer stopped")
    store.import_batch(batch([item("two", 3)]))
    assert seen == [2]  # MEMORY
    assert store.conn.execute("PRAGMA temp_store").fetchone()[0] == 0  # DEFAULT: a file
    assert store.info().row_counts["sessions"] == 2
    store.close()


def test_a_new_ledger_gets_8k_pages_and_an_old_one_keeps_its_own(tmp_path):
    import sqlite3

    new = SqliteStore(tmp_path / "new.db")
    assert new.conn.execute("PRAGMA page_size").fetchone()[0] == 8192
    new.close()
    old_path = tmp_path / "old.db"
    with sqlite3.connect(old_path) as conn:  # a ledger made before pages were 8 KiB
        conn.execute("PRAGMA page_size = 4096")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    old = SqliteStore(old_path)
    old.import_batch(batch([item("one", 3)]))
    assert old.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert old.info().row_counts["sessions"] == 1
    old.close()


def test_an_item_refused_inside_a_group_fails_alone_and_the_rest_commit(tmp_path):
    """Items run without a savepoint each; when one fails, its batch is rolled back and run
    again item by item. Nothing of the group's other batches, nor of the failing item's
    neighbours, is lost or written twice."""
    import dataclasses

    from tests.store.factory import CONTENT, WHEN, snapshot
    from tracehouse.model import ids
    from tracehouse.model.tables import MESSAGES

    second = batch([item(f"s{i}", 3, text=f"word{i}") for i in range(4)])
    rows = {name: second.tuples(name) for name in CONTENT[1:]}
    role, refused = MESSAGES.names.index("role"), ids.session_id("claude-code", "s2")
    rows["messages"] = [
        (*r[:role], None, *r[role + 1 :]) if r[1] == refused else r for r in rows["messages"]
    ]
    store = SqliteStore(tmp_path / "ledger.db")
    with store.import_group() as write:
        write(batch([item("first", 3, text="okapiwhistle")]))
        response = write(dataclasses.replace(second, frames={}, rows=rows))
    assert [r.status for r in response.results] == ["imported"] * 2 + ["failed", "imported"]
    assert "role" in (response.results[2].reason or "")
    clean = SqliteStore(tmp_path / "clean.db")
    clean.import_batch(batch([item("first", 3, text="okapiwhistle")]))
    clean.import_batch(batch([item(f"s{i}", 3, text=f"word{i}") for i in (0, 1, 3)]))
    assert snapshot(store, drop=WHEN) == snapshot(clean, drop=WHEN)
    assert store.search("okapiwhistle") and store.search("word3") and not store.search("word2")
    store.close()
    clean.close()
