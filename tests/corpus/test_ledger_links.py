"""Every fixture home in one run, as a new user's first backfill: every link in the ledger names a
row of the ledger, subagents keep their own messages, review calls are linked both ways, and the
ledger does not depend on how the run is cut into batches and chunks."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import orjson
import pytest

from tests.pipeline.helpers import snapshot
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore

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


def test_turn_chains_reconstruct_every_session(ledgers):
    """From every turn, `parent_turn_id` leads back through earlier turns of its session to the
    session's one first turn. Codex threads and Cursor composers are linear; Claude Code
    sessions are too, except where a prompt went back to an earlier turn (a rewind, a local
    command): there the history branches, as the file's `parentUuid` links do."""
    store = ledgers[BATCH_SIZES[-1]]
    turns = store.query(
        "SELECT t.turn_id, t.parent_turn_id, t.seq, t.session_id, s.source_provider"
        " FROM turns t JOIN sessions s USING (session_id) ORDER BY t.session_id, t.seq"
    )
    by_id = {t["turn_id"]: t for t in turns}
    sessions: dict[str, list[dict]] = {}
    for t in turns:
        sessions.setdefault(t["session_id"], []).append(t)
    branching = 0
    for session_turns in sessions.values():
        roots = [t for t in session_turns if t["parent_turn_id"] is None]
        assert [r["seq"] for r in roots] == [session_turns[0]["seq"]], session_turns[0]
        for t in session_turns:
            node, hops = t, 0
            while node["parent_turn_id"] is not None:
                parent = by_id[node["parent_turn_id"]]
                assert parent["session_id"] == t["session_id"] and parent["seq"] < node["seq"]
                node, hops = parent, hops + 1
            assert node is roots[0]
        linear = all(b["parent_turn_id"] == a["turn_id"] for a, b in pairwise(session_turns))
        if session_turns[0]["source_provider"] != "claude-code":
            assert linear, session_turns[0]
        branching += not linear
    assert len(turns) > 500 and branching >= 1


def test_every_turn_is_in_one_thread(ledgers):
    store = ledgers[BATCH_SIZES[-1]]
    threads = store.query("SELECT session_id, turn_count, is_active FROM threads")
    turns = store.query("SELECT count(*) AS n FROM turns")[0]["n"]
    assert sum(t["turn_count"] for t in threads) == turns
    sessions_with_turns = store.query("SELECT count(DISTINCT session_id) AS n FROM turns")[0]["n"]
    assert sum(bool(t["is_active"]) for t in threads) == sessions_with_turns
    assert len(threads) > sessions_with_turns  # the sessions that branch have more than one
