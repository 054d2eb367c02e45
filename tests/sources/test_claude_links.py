"""Claude Code links that cross lines and files: a subagent whose running messages its parent
mirrors as `agent_progress` records keeps them as its own, and every `parent_message_id` names a
message of the ledger (or is NULL with its reason), however the files are chunked or ordered."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import DATA
from tests.pipeline.helpers import backfill, snapshot
from tests.sources.suite import parse_all
from tracehouse.model import ids
from tracehouse.parsers import claude_code
from tracehouse.parsers.base import ParseOptions
from tracehouse.pipeline.ingest import run_tasks
from tracehouse.pipeline.options import SyncOptions, SyncReport
from tracehouse.store.sqlite.store import SqliteStore

HOME = DATA / "claude" / "mirror-home"
PARENT = "cccccccc-0000-4000-8000-000000000003"
LINKS = "dddddddd-0000-4000-8000-000000000004"
AGENT = "agent-a5b0c9e1.jsonl"


def units():
    return {u.key.rsplit("/", 1)[-1]: u for u in claude_code.discover([HOME / ".claude"])}


def messages(name: str, budget: int = 1 << 30) -> list[dict]:
    _item, frames, rejects = parse_all(claude_code, units()[name], budget)
    assert rejects == []
    rows = sorted(frames["messages"].to_dicts(), key=lambda m: m["seq"])
    for row in rows:
        row["metadata"] = orjson.loads(row["metadata"])
    return rows


def test_the_subagent_keeps_the_messages_its_parent_mirrors():
    item, frames, _ = parse_all(claude_code, units()[AGENT])
    rows = messages(AGENT)
    assert [m["role"] for m in rows] == ["user", "assistant", "tool", "assistant"]
    assert item.session["total_tokens"] == (900 + 40) + (1000 + 25)
    (call,) = frames["tool_calls"].to_dicts()
    assert call["tool_name"] == "Grep" and call["status"] == "completed"
    assert not any("orphan_tool_results" in m["metadata"] for m in rows)


def test_the_parent_folds_its_mirrors_into_nothing_by_a_named_rule():
    result = claude_code.parse(units()[f"{PARENT}.jsonl"], None, ParseOptions(now=1e10))
    assert result.accounting == {"row": 4, "ignored": 3}
    assert result.item.session["metadata"]["records"]["progress/agent_progress"] == 3
    assert result.item.session["total_tokens"] == (500 + 30) + (700 + 20)


@pytest.mark.parametrize("order", ["parent first", "subagent first"])
def test_either_order_of_discovery_gives_the_same_ledger(tmp_path: Path, order: str):
    expected = SqliteStore(tmp_path / "expected.db")
    backfill(expected, HOME)
    store = SqliteStore(tmp_path / "l.db")
    found = claude_code.discover([HOME / ".claude"])
    found.sort(key=lambda u: ("subagents" in u.key) == (order == "parent first"))
    tasks = [(u, None, 0) for u in found]
    options = SyncOptions(sources={}, batch_sessions=1)
    run_tasks(store, options, tasks, SyncReport(run_id="r"), lambda n: None)
    got, want = snapshot(store), snapshot(expected)
    for table in ("sessions", "turns", "messages", "tool_calls"):
        assert got[table] == want[table], table
    child = ids.session_id("claude-code", "-tmp-mirror/agent-a5b0c9e1")
    (row,) = store.query("SELECT * FROM sessions WHERE session_id = ?", [child])
    assert row["parent_session_id"] == ids.session_id("claude-code", PARENT)
    assert row["spawn_tool_call_id"] and row["parent_message_id"]
    assert store.query(
        "SELECT count(*) AS n FROM messages WHERE session_id = ? AND role = 'assistant'", [child]
    ) == [{"n": 2}]
    expected.close()
    store.close()


def test_parents_that_are_no_message_are_null_with_their_reason():
    rows = {m["metadata"]["uuid"]: m for m in messages(f"{LINKS}.jsonl")}
    assert rows["l-u1"]["parent_message_id"] is None  # under a root hook_progress line
    assert rows["l-u1"]["metadata"]["parent_unresolved"] == {
        "uuid": "l-p0",
        "reason": "no message above it",
    }
    assert rows["l-h1"]["parent_message_id"] is None  # under a root hook_success attachment
    assert rows["l-h1"]["metadata"]["parent_unresolved"]["reason"] == "no message above it"
    # l-u2 hangs under a task_reminder whose own parent (a hook line) is written after it
    assert rows["l-u2"]["parent_message_id"] == ids.message_id("claude-code", LINKS, "msg:msg_L1")


def test_a_parent_written_later_is_null_not_a_guessed_id(tmp_path: Path):
    lines = (HOME / ".claude" / "projects" / "-tmp-mirror" / f"{LINKS}.jsonl").read_bytes()
    first, *rest = lines.splitlines(keepends=True)
    project = tmp_path / ".claude" / "projects" / "-tmp-later"
    project.mkdir(parents=True)
    late = orjson.loads(rest[2])  # the user prompt: made to name a line that comes last
    late["parentUuid"] = "l-a2"
    rest[2] = orjson.dumps(late) + b"\n"
    (project / f"{LINKS}.jsonl").write_bytes(first + b"".join(rest))
    (unit,) = claude_code.discover([tmp_path / ".claude"])
    _item, frames, _ = parse_all(claude_code, unit)
    prompt = next(m for m in frames["messages"].to_dicts() if m["content"] == "Run the tests")
    assert prompt["parent_message_id"] is None
    assert orjson.loads(prompt["metadata"])["parent_unresolved"]["reason"] == (
        "not among the lines before"
    )


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(budget=st.integers(min_value=1, max_value=3000))
def test_links_do_not_depend_on_chunks(budget):
    for name in (f"{LINKS}.jsonl", f"{PARENT}.jsonl", AGENT):
        assert messages(name, budget) == messages(name)


def test_every_parent_names_a_message_in_a_long_session_in_chunks(tmp_path: Path):
    """A parent further back than the link window is NULL in one parse and in chunks alike."""
    from tracehouse.parsers.claude_code.links import LINK_WINDOW

    project = tmp_path / ".claude" / "projects" / "-tmp-long"
    project.mkdir(parents=True)
    env = {"sessionId": "long", "cwd": "/tmp/long", "version": "2.1.30", "isSidechain": False}
    out = []
    for n in range(LINK_WINDOW + 40):
        # every 100th prompt rewinds to the first answer: far back once the window has moved on
        parent = "a0" if n and n % 100 == 0 else (f"a{n - 1}" if n else None)
        ts = f"2026-02-12T08:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        out.append({**env, "type": "user", "uuid": f"u{n}", "parentUuid": parent,
                    "timestamp": ts, "message": {"role": "user", "content": f"q{n}"}})  # fmt: skip
        out.append({**env, "type": "assistant", "uuid": f"a{n}", "parentUuid": f"u{n}",
                    "timestamp": ts, "requestId": f"r{n}", "message": {
                        "id": f"msg_{n}", "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": f"a{n}"}]}})  # fmt: skip
    path = project / "long.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in out))
    (unit,) = claude_code.discover([tmp_path / ".claude"])
    whole = parse_all(claude_code, unit)[1]["messages"]
    chunked = parse_all(claude_code, unit, 20_000)[1]["messages"]
    assert chunked.sort("seq").rows() == whole.sort("seq").rows()
    present = set(whole.get_column("message_id").to_list())
    parents = [p for p in whole.get_column("parent_message_id").to_list() if p is not None]
    assert parents and set(parents) <= present


def test_the_independent_corpus_rule_agrees_on_the_mirror_home():
    from tests.corpus.test_claude_corpus import expected_tokens

    for name, unit in units().items():
        item, _frames, _ = parse_all(claude_code, unit)
        assert item.session["total_tokens"] == expected_tokens(Path(unit.key)), name
