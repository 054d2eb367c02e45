"""Every fixture home in one run, as a new user's first backfill: every link in the ledger names a
row of the ledger, subagents keep their own messages, review calls are linked both ways, and the
ledger does not depend on how the run is cut into batches and chunks."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.pipeline.helpers import snapshot
from tracehouse.pipeline.sync import SyncOptions, sync
from tracehouse.sinks.sqlite.store import SqliteStore

pytestmark = pytest.mark.corpus
BATCH_SIZES = (256 << 10, 1 << 20, 8 << 20)


def all_sources(corpus: Path) -> dict[str, list[Path]]:
    homes = sorted((corpus / "homes").iterdir())
    return {
        "claude-code": [h / ".claude" for h in homes if (h / ".claude" / "projects").is_dir()],
        "codex": [h / ".codex" for h in homes if (h / ".codex").is_dir()],
        "cursor": [
            h / ".config" / "Cursor" / "User"
            for h in homes
            if (h / ".config" / "Cursor" / "User").is_dir()
        ],
    }


@pytest.fixture(scope="module")
def ledgers(corpus, tmp_path_factory):
    out = {}
    for size in BATCH_SIZES:
        store = SqliteStore(tmp_path_factory.mktemp("links") / "ledger.db")
        options = SyncOptions(
            sources=all_sources(corpus), workers=0, batch_bytes=size, chunk_bytes=size
        )
        report = sync(store, options)
        assert report.ok, (report.rejects, report.failures)
        out[size] = store
    yield out
    for store in out.values():
        store.close()


def test_the_ledger_is_the_same_for_every_batch_size(ledgers):
    snaps = {size: snapshot(store) for size, store in ledgers.items()}
    for snap in snaps.values():
        snap.pop("watermarks")
    reference = snaps[BATCH_SIZES[-1]]
    assert reference["sessions"], "the corpus gives sessions"
    for size, snap in snaps.items():
        for table, rows in reference.items():
            assert snap[table] == rows, (size, table)


@pytest.mark.parametrize("size", BATCH_SIZES)
def test_every_parent_message_names_a_message(ledgers, size):
    store = ledgers[size]
    dangling = store.query(
        "SELECT m.source_ref FROM messages m WHERE m.parent_message_id IS NOT NULL"
        " AND NOT EXISTS (SELECT 1 FROM messages p WHERE p.message_id = m.parent_message_id)"
    )
    assert dangling == []
    for row in store.query(
        "SELECT metadata FROM messages WHERE parent_message_id IS NULL"
        " AND metadata LIKE '%parent_unresolved%'"
    ):
        assert orjson.loads(row["metadata"])["parent_unresolved"]["reason"]
    # (a subagent's parent session may be absent: its transcript is not among the fixtures)
    for column, table, key in (
        ("parent_message_id", "messages", "message_id"),
        ("spawn_tool_call_id", "tool_calls", "tool_call_id"),
    ):
        lost = store.query(
            f"SELECT label FROM sessions s WHERE s.{column} IS NOT NULL AND NOT EXISTS"
            f" (SELECT 1 FROM {table} t WHERE t.{key} = s.{column})"
        )
        assert lost == [], column


def test_every_subagent_with_assistant_lines_keeps_them(ledgers):
    store = ledgers[BATCH_SIZES[-1]]
    checked = 0
    for child in store.query(
        "SELECT session_id, source_path FROM sessions"
        " WHERE is_subagent AND source_provider = 'claude-code'"
    ):
        lines = Path(child["source_path"]).read_bytes().splitlines()
        has_assistant = any(orjson.loads(line).get("type") == "assistant" for line in lines)
        (found,) = store.query(
            "SELECT count(*) AS n FROM messages WHERE session_id = ? AND role = 'assistant'",
            [child["session_id"]],
        )
        if has_assistant:
            assert found["n"] >= 1, child["source_path"]
            checked += 1
    assert checked >= 10


def test_every_review_call_is_linked_both_ways(ledgers):
    store = ledgers[BATCH_SIZES[-1]]
    reviews = store.query("SELECT * FROM tool_calls WHERE tool_name = 'review'")
    assert reviews
    for call in reviews:
        assert call["spawned_session_id"], call["tool_call_id"]
        (child,) = store.query(
            "SELECT * FROM sessions WHERE session_id = ?", [call["spawned_session_id"]]
        )
        assert child["spawn_tool_call_id"] == call["tool_call_id"]
        assert child["parent_message_id"] == call["message_id"]
