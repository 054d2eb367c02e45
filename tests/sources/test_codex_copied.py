"""Codex rollouts that begin with history copied from another thread (parsers/codex/copied.py):
a resumed 0.36-era rollout and a spawned child whose copy comes more than a second after their
own session_meta. Their copied token counts are the source thread's; their messages stay."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.conftest import DATA
from tests.sources.suite import parse_all
from tracehouse.model import ids
from tracehouse.parsers import codex
from tracehouse.parsers.codex.copied import COPY, OWN, CopiedHistory

HOME = DATA / "codex" / "copied" / ".codex"
RESUMED, RESUMED_FROM = (
    "0199a111-0000-7000-8000-00000000000b",
    "0199a111-0000-7000-8000-00000000000a",
)
CHILD, PARENT = "019c1111-0000-7000-8000-0000000000c2", "019c1111-0000-7000-8000-0000000000c1"


def parsed(thread: str, budget: int = 1 << 30) -> tuple[Any, dict[str, list[dict[str, Any]]]]:
    unit = next(u for u in codex.discover([HOME]) if u.info.get("thread") == thread)
    item, frames, rejects = parse_all(codex, unit, budget)
    assert rejects == []
    rows = {
        name: frame.sort("seq").to_dicts()
        for name, frame in frames.items()
        if name != "message_sources"
    }
    for table in rows.values():
        for row in table:
            for key in ("meta", "metadata"):
                if isinstance(row.get(key), str):
                    row[key] = orjson.loads(row[key])
    return item, rows


@pytest.mark.parametrize("budget", [1 << 30, 700, 3000])
def test_a_resumed_rollout_counts_only_its_own_tokens(budget):
    item, rows = parsed(RESUMED, budget)
    s = item.session
    # own: 1200 + 1400 input; the copied 5000 + 3000 (3.5 s after the first session_meta) are not
    assert (s["input_tokens"], s["cached_input_tokens"]) == (2600, 1100)
    assert (s["output_tokens"], s["reasoning_tokens"]) == (180, 40)
    assert s["total_tokens"] == sum(t["total_tokens"] or 0 for t in rows["turns"]) == 2780
    assert s["metadata"]["replayed_records"] == 2


def test_copied_messages_stay_flagged_with_the_thread_they_came_from():
    _, rows = parsed(RESUMED)
    flags = {m["content"]: m["metadata"].get("replayed_from") for m in rows["messages"]}
    assert flags["add a health endpoint"] == RESUMED_FROM
    assert flags["Tests pass."] == RESUMED_FROM
    assert flags["also add a readiness probe"] is None and flags["Added /ready."] is None
    copied_turns = [t for t in rows["turns"] if t["metadata"].get("replayed_from")]
    assert len(copied_turns) == 2 and all(t["total_tokens"] is None for t in copied_turns)
    call = next(c for c in rows["tool_calls"] if c["source_tool_call_id"] == "call_old1")
    assert call["turn_id"] in {t["turn_id"] for t in copied_turns}


def test_a_spawned_child_copied_after_its_creation_second():
    item, rows = parsed(CHILD)
    s = item.session
    assert (s["input_tokens"], s["output_tokens"], s["reasoning_tokens"]) == (700, 120, 40)
    assert s["total_tokens"] == sum(t["total_tokens"] or 0 for t in rows["turns"]) == 820
    assert s["parent_session_id"] == ids.session_id("codex", PARENT)
    copied = [m for m in rows["messages"] if m["metadata"].get("replayed_from") == PARENT]
    assert {m["content"] for m in copied} >= {"map the services", "Three services."}
    # the parent's prompts in the copy do not take the child's own first prompt's attribution
    own = next(m for m in rows["messages"] if m["content"] == "explore billing/")
    assert own["meta"]["source"] == "agent"
    assert own["meta"]["source_agent_id"] == ids.session_id("codex", PARENT)
    assert all(m["meta"] is None for m in copied if m["message_type"] == "user")


def test_the_burst_follows_the_last_session_meta_and_ends_at_a_pause():
    tracker = CopiedHistory()
    own = {"id": "a"}
    tracker.observe("session_meta", own, "2026-01-01T00:00:00.000Z", own)
    tracker.observe("session_meta", {"id": "b"}, "2026-01-01T00:00:04.000Z", own)
    assert tracker.phase == COPY and tracker.source == "b"
    for ms in range(4000, 4900, 100):  # a burst of 900 ms, 100 ms apart: still the copy
        tracker.observe(
            "response_item", {}, f"2026-01-01T00:00:0{ms // 1000}.{ms % 1000:03d}Z", own
        )
        assert tracker.active
    tracker.observe("event_msg", {}, "2026-01-01T00:00:06.000Z", own)
    assert tracker.phase == OWN
    tracker.observe("session_meta", {"id": "c"}, "2026-01-01T00:00:07.000Z", own)
    assert not tracker.active  # a session_meta among the thread's own records copies nothing


def test_a_thread_of_its_own_has_no_copy():
    tracker = CopiedHistory()
    own = {"id": "a", "source": "cli"}
    tracker.observe("session_meta", own, "2026-01-01T00:00:00.000Z", own)
    tracker.observe("turn_context", {}, "2026-01-01T00:00:00.001Z", own)
    assert tracker.phase == OWN


@pytest.mark.parametrize("thread", [RESUMED, CHILD])
def test_the_independent_corpus_rule_agrees(thread):
    from tests.corpus.test_codex_corpus import expected_tokens

    item, _ = parsed(thread)
    s = item.session
    path = next(HOME.rglob(f"rollout-*{thread}.jsonl"))
    assert expected_tokens(str(path)) == (
        s["input_tokens"],
        s["output_tokens"],
        s["cached_input_tokens"],
    )
