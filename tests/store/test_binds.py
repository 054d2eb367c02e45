"""How values reach SQLite's writer (`store.sqlite.binds`): a ledger's connection binds None and
bytes without the adapter lookup, and what is stored is what it was: a None is NULL, and a large
text a parser sent as its UTF-8 bytes is TEXT, equal to the text, found by search. (The index
builders' rows: `test_index_builders`, term for term against the writer's own index.)"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

from tests.store.factory import batch, item
from tracehouse.model.tables import MESSAGES, TOOL_CALLS
from tracehouse.search.hits import SearchFilters
from tracehouse.store.sqlite.binds import as_utf8, for_writer
from tracehouse.store.sqlite.store import SqliteStore

NONE_KEY = (type(None), sqlite3.PrepareProtocol)


def test_opening_a_ledger_registers_the_adapters(tmp_path: Path):
    # In a process of its own: this one's registry may hold them already from another test.
    script = textwrap.dedent(
        f"""
        import sqlite3
        from tracehouse.store.sqlite.store import SqliteStore
        keys = [(t, sqlite3.PrepareProtocol) for t in (type(None), bytes)]
        assert not any(k in sqlite3.adapters for k in keys)
        SqliteStore({str(tmp_path / "ledger.db")!r}).close()
        assert all(k in sqlite3.adapters for k in keys)
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_none_is_still_stored_as_null(tmp_path: Path):
    store = SqliteStore(tmp_path / "ledger.db")
    try:
        assert NONE_KEY in sqlite3.adapters
        got = store.conn.execute("SELECT typeof(?), ? IS NULL, typeof(?)", (None, None, b"x"))
        assert got.fetchone() == ("null", 1, "blob")
        with store.import_group() as write:
            assert write(batch([item("s1", 2)])).ok
        # A session without a model or a branch, a message without a parent: NULL, not text.
        kinds = store.conn.execute(
            "SELECT typeof(model), typeof(git_branch) FROM sessions WHERE source_session_id = 's1'"
        ).fetchone()
        assert kinds == ("null", "null")
        parents = store.conn.execute("SELECT typeof(parent_message_id) FROM messages").fetchall()
        assert parents == [("null",), ("null",)]
    finally:
        store.close()


def _rows(store: SqliteStore, sql: str) -> list[tuple[object, ...]]:
    return store.conn.execute(sql).fetchall()


def test_texts_sent_as_utf8_are_stored_as_the_same_text(tmp_path: Path):
    words = "naïve 検索 façade déjà-vu résumé"
    plain = batch([item("s1", 4, text=words)])
    result, params = TOOL_CALLS.names.index("result"), TOOL_CALLS.names.index("params")
    (call,) = plain.rows["tool_calls"]
    ascii_only = plain.rows["tool_calls"]
    call = (*call[:result], f"{words} ok", *call[result + 1 :])
    plain = replace(plain, rows={**plain.rows, "tool_calls": [call]})
    sent = for_writer(plain)  # as a parser process sends it
    assert sent.unspaced == {plain.items[0].session_id}  # 検索: a script without spaces
    content = MESSAGES.names.index("content")
    assert all(type(r[content]) is bytes for r in sent.rows["messages"])
    assert all(type(r[MESSAGES.names.index("message_id")]) is str for r in sent.rows["messages"])
    (sent_call,) = sent.rows["tool_calls"]
    assert type(sent_call[result]) is bytes and sent_call[params] == call[params]  # ASCII: as is
    assert as_utf8({"tool_calls": ascii_only})["tool_calls"][0] is ascii_only[0]  # not rebuilt

    as_text, as_bytes = SqliteStore(tmp_path / "a.db"), SqliteStore(tmp_path / "b.db")
    try:
        with as_text.import_group() as write:
            assert write(plain).ok
        with as_bytes.import_group() as write:
            assert write(sent).ok
        for sql in (
            "SELECT message_id, typeof(content), content, fingerprint FROM messages ORDER BY 1",
            "SELECT tool_call_id, typeof(params), params, result FROM tool_calls ORDER BY 1",
        ):
            assert _rows(as_bytes, sql) == _rows(as_text, sql)
            assert all(r[1] == "text" for r in _rows(as_bytes, sql))
        hits = as_bytes.search("façade", SearchFilters())
        assert hits and hits == as_text.search("façade", SearchFilters())
    finally:
        as_text.close()
        as_bytes.close()


def test_a_row_with_a_text_utf8_cannot_hold_goes_as_it_came():
    plain = batch([item("s1", 2, text="déjà")])
    content = MESSAGES.names.index("content")
    first = list(plain.rows["messages"][0])
    first[content] = "half a pair: \ud83d"
    rows = {**plain.rows, "messages": [tuple(first), *plain.rows["messages"][1:]]}
    sent = as_utf8(rows)["messages"]
    assert sent[0] == tuple(first)
    assert type(sent[1][content]) is bytes
