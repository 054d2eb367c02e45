"""A ledger's connection binds None without the adapter lookup (`bind_none_directly`), and a
None still arrives as NULL: in a bound parameter and in the rows an import writes (the index
builders' rows: `test_index_builders`, term for term against the writer's own index)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.store.factory import batch, item
from tracehouse.sinks.sqlite.store import SqliteStore

NONE_KEY = (type(None), sqlite3.PrepareProtocol)


def test_opening_a_ledger_registers_the_adapter_for_none(tmp_path: Path):
    # In a process of its own: this one's registry may hold it already from another test.
    script = textwrap.dedent(
        f"""
        import sqlite3
        from tracehouse.sinks.sqlite.store import SqliteStore
        key = (type(None), sqlite3.PrepareProtocol)
        assert key not in sqlite3.adapters
        SqliteStore({str(tmp_path / "ledger.db")!r}).close()
        assert key in sqlite3.adapters
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_none_is_still_stored_as_null(tmp_path: Path):
    store = SqliteStore(tmp_path / "ledger.db")
    try:
        assert NONE_KEY in sqlite3.adapters
        assert store.conn.execute("SELECT typeof(?), ? IS NULL", (None, None)).fetchone() == (
            "null",
            1,
        )
        with store.import_group() as write:
            assert write(batch([item("s1", 2)])).ok
        # A session without a model or a branch, a message without a parent: NULL, not text.
        kinds = store.conn.execute(
            "SELECT typeof(model), typeof(git_branch) FROM sessions WHERE source_session_id = 's1'"
        ).fetchone()
        assert kinds == ("null", "null")
        nulls = store.conn.execute(
            "SELECT count(*) FROM messages WHERE parent_message_id IS NULL"
        ).fetchone()[0]
        assert nulls == 2
        assert store.conn.execute(
            "SELECT count(*) FROM messages WHERE typeof(parent_message_id) = 'text'"
        ).fetchone() == (0,)
    finally:
        store.close()
