"""The SQLite writer indexes the rows of sessions free of unspaced scripts as they are, and every
other row through the segmenting SQL function (`sqlite_index.note_sessions`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.store.factory import batch, item
from tracehouse.pipeline import workers
from tracehouse.pipeline.ingest import Ready
from tracehouse.pipeline.options import SyncReport
from tracehouse.search import scripts, sqlite_index
from tracehouse.search.hits import SearchFilters
from tracehouse.store.sqlite.store import SqliteStore

EVERYTHING = SearchFilters(limit=1000)


@pytest.fixture
def ledger(tmp_path: Path):
    store = SqliteStore(tmp_path / "ledger.db")
    segmented: list[str] = []

    def counting(text):  # type: ignore[no-untyped-def]
        if isinstance(text, str):
            segmented.append(text)
        return scripts.sql_segmented(text)

    store.conn.create_function(sqlite_index.SEGMENTED, 1, counting, deterministic=True)
    yield store, segmented
    store.close()


def test_a_plain_session_is_indexed_without_the_function(ledger):
    store, segmented = ledger
    assert store.import_batch(batch([item("plain", 4, text="rotate the webhook key")])).ok
    assert not [t for t in segmented if "webhook" in t]  # its messages and calls: as they are
    assert store.search("webhook", EVERYTHING)


def test_a_session_with_an_unspaced_script_is_segmented_whichever_batch_brings_it(ledger):
    """Two batches of one session in one transaction: the first plain, the second with Chinese
    text; the session's rows all go through the function and the word inside the run is found.
    A plain session beside it in the same batch is not segmented."""
    store, segmented = ledger
    first = item("mixed", 2, text="plain words first")
    second = item("mixed", 4, text="帮我搜集所有聊天记录")
    with store.import_group() as write:
        assert write(batch([first, item("beside", 2, text="nothing to split")])).ok
        assert write(batch([second])).ok
    assert any("聊天记录" in t for t in segmented)
    assert not [t for t in segmented if "nothing to split" in t]
    beside = {h.session_id for h in store.search("nothing", EVERYTHING)}
    found = {h.session_id for h in store.search("记录", EVERYTHING)}
    assert len(beside) == 1 and len(found) == 1 and found != beside


def test_rows_written_outside_an_import_go_through_the_function(ledger):
    """A row no import noted (written by hand here) is indexed through the function, as before."""
    store, segmented = ledger
    assert store.import_batch(batch([item("s", 2, text="first")])).ok
    conn = store.conn
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT INTO messages (message_id, session_id, seq, role, message_type, content)"
        " SELECT 'by-hand', session_id, 99, 'user', 'text', 'これは日本語のテキストです'"
        " FROM sessions LIMIT 1"
    )
    sqlite_index.flush(conn)
    conn.execute("COMMIT")
    assert "これは日本語のテキストです" in segmented
    assert store.search("テキスト", EVERYTHING)


def test_the_writer_takes_the_parsers_word_for_which_sessions_to_segment(ledger):
    """A batch that says which sessions hold unspaced scripts (`ImportBatch.unspaced`, from a
    parser process) is taken at its word: the session it names goes through the function."""
    store, segmented = ledger
    plain = batch([item("named", 2, text="plain words here")])
    named = dataclasses.replace(plain, unspaced=frozenset(i.session_id for i in plain.items))
    assert store.import_batch(named).ok
    assert any("plain words here" in t for t in segmented)


def test_a_parser_process_works_out_the_sessions_to_segment(ledger):
    both = batch([item("cjk", 2, text="帮我搜集所有聊天记录"), item("plain", 2, text="plain")])
    ready = Ready(both, [], 2, 100)
    hinted = workers._hinted(ready, SyncReport(run_id="r" * 26))
    assert hinted.batch is not None
    assert hinted.batch.unspaced == {both.items[0].session_id}
    assert workers._hinted(Ready(None, [], 0, 0), SyncReport(run_id="r" * 26)).batch is None
