"""Every Claude Code file in $TRACEHOUSE_CORPUS: parsed without rejects, every record accounted
for, subagents linked to their spawning tool call, and token totals equal to an independent
dedupe computed here from the raw lines."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import orjson
import pytest

from tracehouse.model import ids
from tracehouse.parsers import claude_code
from tracehouse.parsers.base import ParseOptions, Unit
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.corpus
ACCOUNTED = {"row", "folded", "ignored", "source", "replayed"}


def claude_homes(corpus: Path) -> list[Path]:
    return sorted(p for p in (corpus / "homes").glob("*/.claude") if (p / "projects").is_dir())


def all_units(corpus: Path) -> list[Unit]:
    units = claude_code.discover(claude_homes(corpus))
    for path in sorted((corpus / "excerpts" / "claude-code").glob("*.jsonl")):
        units.append(
            Unit(
                "claude-code",
                str(path),
                str(path.parent),
                {"session": path.stem, "project": "excerpts"},
            )
        )
    return units


def test_the_corpus_has_claude_files(corpus):
    assert len(all_units(corpus)) >= 60


def test_every_file_parses_with_every_record_accounted(corpus):
    options = ParseOptions(budget_bytes=1 << 30, now=time.time() + 3600)
    totals: Counter[str] = Counter()
    for unit in all_units(corpus):
        result = claude_code.parse(unit, None, options)
        assert result.done
        assert result.rejects == [], unit.key
        lines = [ln for ln in unit.path.read_bytes().splitlines() if ln.strip()]
        assert sum(result.accounting.values()) == len(lines), unit.key
        assert set(result.accounting) <= ACCOUNTED, (unit.key, result.accounting)
        totals.update(result.accounting)
    assert totals["row"] > 3000


def expected_tokens(path: Path) -> int:
    """Each API response once: the largest usage per (message.id, requestId); <synthetic> is 0;
    a line whose uuid was already seen in the file is a replay."""
    best: dict[tuple[str, str], int] = {}
    seen: set[str] = set()
    for raw in path.read_bytes().splitlines():
        if not raw.strip():
            continue
        r = orjson.loads(raw)
        uuid = r.get("uuid")
        if isinstance(uuid, str) and r.get("type") in ("user", "assistant", "system", "attachment"):
            if uuid in seen:
                continue
            seen.add(uuid)
        m = r.get("message")
        # progress/agent_progress lines mirror a subagent's messages: its own file counts them
        if r.get("type") != "assistant" or not isinstance(m, dict):
            continue
        u = m.get("usage") or {}
        total = (
            0
            if m.get("model") == "<synthetic>"
            else sum(
                u.get(k) or 0
                for k in (
                    "input_tokens",
                    "output_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                )
            )
        )
        key = (str(m.get("id") or r.get("uuid")), str(r.get("requestId") or ""))
        best[key] = max(best.get(key, 0), total)
    return sum(best.values())


@pytest.fixture(scope="module")
def ledgers(corpus, tmp_path_factory):
    out = {}
    for home in claude_homes(corpus):
        store = SqliteStore(tmp_path_factory.mktemp("corpus") / "ledger.db")
        report = sync(store, SyncOptions(sources={"claude-code": [home]}))
        assert report.ok, (home, report.rejects, report.failures)
        out[home] = store
    yield out
    for store in out.values():
        store.close()


def test_token_totals_match_an_independent_dedupe(ledgers):
    checked = 0
    for store in ledgers.values():
        for session in store.rows("sessions"):
            path = Path(session["source_path"])
            # a session with no usage recorded has NULL totals, the rule's 0
            assert (session["total_tokens"] or 0) == expected_tokens(path), path
            turns = [t for t in store.rows("turns") if t["session_id"] == session["session_id"]]
            counted = [t["total_tokens"] for t in turns if t["total_tokens"] is not None]
            assert session["total_tokens"] == (sum(counted) if counted else None)
            checked += 1
    assert checked >= 40


def spawning_results(home: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(project dir, agentId) → (parent session file stem, tool_use id), read from raw lines."""
    found = {}
    for path in (home / "projects").glob("*/*.jsonl"):
        if path.name.startswith("agent-"):
            continue
        for raw in path.read_bytes().splitlines():
            r = orjson.loads(raw)
            result = r.get("toolUseResult")
            if not (isinstance(result, dict) and isinstance(result.get("agentId"), str)):
                continue
            for block in (r.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    key = (path.parent.name, result["agentId"])
                    found[key] = (path.stem, block["tool_use_id"])
    return found


def test_subagents_are_linked_to_their_parent_and_spawning_tool_call(ledgers):
    linked = orphans = 0
    for home, store in ledgers.items():
        spawns = spawning_results(home)
        calls = {c["tool_call_id"]: c for c in store.rows("tool_calls")}
        for child in store.rows("sessions"):
            if not child["is_subagent"]:
                continue
            project, agent = child["source_session_id"].split("/agent-")
            if (project, agent) not in spawns:
                orphans += 1  # a warm-up agent, or its parent's file is not in the corpus
                continue
            parent_stem, tool_use_id = spawns[(project, agent)]
            parent_id = ids.session_id("claude-code", parent_stem)
            call_id = ids.tool_call_id("claude-code", parent_stem, tool_use_id)
            assert child["parent_session_id"] == parent_id, child["source_path"]
            assert child["spawn_tool_call_id"] == call_id, child["source_path"]
            assert child["parent_message_id"] == calls[call_id]["message_id"]
            assert calls[call_id]["spawned_session_id"] == child["session_id"]
            linked += 1
    # every subagent whose spawning Task result is in the corpus is linked (11 of 17 today)
    assert linked >= 11 and linked + orphans >= 17
