"""Every Codex file in $TRACEHOUSE_CORPUS: parsed without rejects, every line accounted for,
every output joined to its call, the review child linked to its parent, and token totals equal
to the token rule computed independently here from the raw lines."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from tracehouse.model import ids
from tracehouse.parsers import codex
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.codex.discover import rollout_unit
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.corpus
ACCOUNTED = {"row", "folded", "joined", "amended", "echo", "tokens", "mirrored", "replayed",
             "source", "orphan", "review", "unknown"}  # fmt: skip
OUTPUTS = ("function_call_output", "custom_tool_call_output", "tool_search_output")
CALLS = ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call")


def codex_homes(corpus: Path) -> list[Path]:
    return sorted((corpus / "homes").glob("*/.codex"))


def rollouts(corpus: Path) -> list[Unit]:
    units = [u for u in codex.discover(codex_homes(corpus)) if u.info["kind"] != "history"]
    assert len(units) >= 20, "the corpus holds the Codex rollouts"
    return units


def parse_whole(unit: Unit) -> UnitResult:
    return codex.parse(unit, None, ParseOptions(now=time.time() + 3600))


def records(path: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in Path(path).read_bytes().splitlines() if line.strip()]


def test_every_rollout_parses_without_rejects_and_every_line_is_accounted(corpus):
    for unit in rollouts(corpus):
        result = parse_whole(unit)
        assert result.rejects == [], unit.key
        if unit.info["kind"] == "legacy":
            continue
        accounted = result.accounting
        assert sum(accounted.values()) == len(records(unit.key)), unit.key
        assert set(accounted) <= ACCOUNTED, (unit.key, accounted)
        assert accounted["unknown"] == 0, unit.key


def test_excerpts_and_histories_parse_without_crash(corpus):
    for path in sorted((corpus / "excerpts" / "codex").glob("*.jsonl")):
        result = parse_whole(rollout_unit(str(path), str(path.parent)))
        assert sum(result.accounting.values()) == len(records(str(path)))
        assert result.item is not None
    histories = [u for u in codex.discover(codex_homes(corpus)) if u.info["kind"] == "history"]
    assert histories
    for unit in histories:
        assert parse_whole(unit).rejects == [], unit.key


def test_every_output_is_joined_to_its_call(corpus):
    for unit in rollouts(corpus):
        if unit.info["kind"] == "legacy":
            continue
        calls: set[str] = set()
        outputs = 0
        for r in records(unit.key):
            p = r.get("payload", r) if isinstance(r.get("payload"), dict) else r
            if p.get("type") in CALLS:
                calls.add(p.get("call_id"))
            elif p.get("type") in OUTPUTS and p.get("call_id") in calls:
                outputs += 1
        result = parse_whole(unit)
        assert result.accounting["joined"] == outputs, unit.key
        assert result.accounting["orphan"] == 0, unit.key


def copied_block(recs: list[dict[str, Any]]) -> range:
    """The history copied from another thread: after the rollout's leading session_meta lines
    (its own, then the source's), the burst of records each within 500 ms of the one before.
    Only a rollout with a copied session_meta, or a fork or spawned child, has one."""
    metas = 0
    while metas < len(recs) and recs[metas].get("type") == "session_meta":
        metas += 1
    own = recs[0].get("payload", {}) if metas else {}
    spawn = ((own.get("source") or {}) if isinstance(own.get("source"), dict) else {}).get(
        "subagent"
    )
    child = own.get("forked_from_id") or (isinstance(spawn, dict) and "thread_spawn" in spawn)
    if metas == 0 or (metas == 1 and not child):
        return range(0)
    at = _seconds(recs[metas - 1])
    end = metas
    while end < len(recs):
        here = _seconds(recs[end])
        if recs[end].get("type") != "session_meta" and here - at > 0.5:
            break
        at, end = here, end + 1
    return range(metas, end)


def _seconds(r: dict[str, Any]) -> float:
    from datetime import datetime

    return datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")).timestamp()


def expected_tokens(path: str) -> tuple[int, int, int]:
    """The token rule, written out: count an event's last usage only when the thread's running
    total changed since the previous event, never while a review child's usage is mirrored,
    never in history copied from another thread."""
    previous = None
    reviewing = False
    inp = out = cached = 0
    recs = records(path)
    copied = copied_block(recs)
    for at, r in enumerate(recs):
        p = r.get("payload") if isinstance(r.get("payload"), dict) else {}
        kind = p.get("type")
        if kind in ("entered_review_mode", "exited_review_mode"):
            reviewing = kind == "entered_review_mode"
        if kind != "token_count" or not isinstance(p.get("info"), dict):
            continue
        total = p["info"].get("total_token_usage")
        if total is None or total == previous:
            continue
        previous = total
        last = p["info"].get("last_token_usage") or total
        if not reviewing and at not in copied:
            inp += last.get("input_tokens", 0)
            out += last.get("output_tokens", 0)
            cached += last.get("cached_input_tokens", 0)
    return inp, out, cached


def test_token_totals_follow_the_rule(corpus):
    checked = 0
    for unit in rollouts(corpus):
        item = parse_whole(unit).item
        if item is None or unit.info["kind"] == "legacy":
            continue
        s = item.session
        got = tuple(s[c] or 0 for c in ("input_tokens", "output_tokens", "cached_input_tokens"))
        assert got == expected_tokens(unit.key), unit.key
        checked += got != (0, 0, 0)
    assert checked >= 10


def test_the_review_child_is_linked_to_its_parent(corpus, tmp_path):
    home = corpus / "homes" / "0h-n0-local-voice-assistant-codex" / ".codex"
    store = SqliteStore(tmp_path / "l.db")
    report = sync(store, SyncOptions(sources={"codex": [home]}, workers=0))
    assert report.rejects == []
    parent = ids.session_id("codex", "019b55c1-d022-7061-bbb9-b0c90708472b")
    (child,) = store.query(
        "SELECT * FROM sessions WHERE source_session_id = ?",
        ["019b5669-8da8-7bc3-bed8-e1c1b805dad5"],
    )
    assert child["parent_session_id"] == parent and child["is_subagent"]
    (call,) = store.query(
        "SELECT * FROM tool_calls WHERE tool_call_id = ?", [child["spawn_tool_call_id"]]
    )
    assert call["session_id"] == parent and call["tool_name"] == "review"
    # linked both ways: the call names the child, the child the message that made the call
    assert call["spawned_session_id"] == child["session_id"]
    assert child["parent_message_id"] == call["message_id"] is not None
