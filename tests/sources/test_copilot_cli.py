"""GitHub Copilot CLI: the source suite on tests/data (a 1.0 session folder, a flat event
log, legacy documents), then its rules: prompts open turns, tool requests pair with their
executions, the shutdown's totals complete the replies' output counts, workspace.yaml titles."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions, spoiled_copy
from tests.sources.suite import SourceSuite
from tracehouse.parsers import copilot_cli

ROOT = DATA / "copilot" / "home" / ".copilot"
G3, G2 = "b87feda8-379e-4f8c-aa42-000000000001", "27d7ef99-f7c7-43eb-8599-000000000002"
G1, EMPTY = "e02997e2-e7e7-46ae-8027-000000000003", "ea20af27-b3c6-4843-b737-000000000004"


@pytest.fixture
def parser():
    return copilot_cli


@pytest.fixture
def units():
    return copilot_cli.discover([ROOT])


@pytest.fixture
def bad_unit(tmp_path):
    events = next(u for u in copilot_cli.discover([ROOT]) if u.key.endswith("events.jsonl"))
    target = tmp_path / "session-state" / G3 / "events.jsonl"
    spoiled_copy(events.path, target, ["{not json", '{"type": "totally-new-record"}', "[]"], 4)
    (unit,) = copilot_cli.discover([tmp_path])
    return unit


class TestCopilotContract(SourceSuite):
    pass


def test_all_three_layouts_are_found(units) -> None:
    assert sorted(u.info["session"] for u in units) == sorted([G1, EMPTY, G2, G3])


def test_an_event_log_reads_with_calls_notices_and_the_shutdown_totals(units) -> None:
    item, rows = sessions(copilot_cli, units)[G3]
    session = item.session
    assert session["title"] == "Add a health check"  # workspace.yaml's name
    assert (session["workspace_path"], session["git_branch"], session["git_remote"]) == (
        "/home/dev/site", "main", "dev/site")  # fmt: skip
    assert session["tool_version"] == "1.0.60" and session["model"] == "claude-sonnet-4.6"
    assert session["input_tokens"] == 10000 and session["output_tokens"] == 200
    assert session["cached_input_tokens"] == 9000 and session["cache_write_tokens"] == 700
    assert session["total_tokens"] == 10200
    calls = {c["source_tool_call_id"]: c for c in rows["tool_calls"].to_dicts()}
    assert calls["toolu_01"]["status"] == "completed"
    assert calls["toolu_02"]["status"] == "pending"  # aborted before it completed
    assert json.loads(calls["toolu_02"]["params"]) == {"command": "pytest -q"}
    messages = rows["messages"].sort("seq")
    assert messages["message_type"].to_list() == ["user", "assistant", "assistant", "host",
                                                  "host"]  # fmt: skip
    assert json.loads(messages["context"][0])["sent"].endswith("add a /health route")
    assert rows["turns"]["status"].to_list() == ["aborted"]


def test_a_flat_log_and_a_legacy_document_read_and_an_empty_one_is_no_session(units) -> None:
    found = sessions(copilot_cli, units)
    assert EMPTY not in found  # a notice alone is no conversation
    flat = found[G2][0].session
    assert flat["tool_version"] is None and flat["input_tokens"] is None  # "unknown", no shutdown
    legacy, rows = found[G1]
    assert legacy.session["model"] == "gpt-5" and legacy.session["message_count"] == 3
    (call,) = rows["tool_calls"].to_dicts()
    assert call["result"] == "[README.md]" and call["completed_at"] == "2025-10-26T15:48:18.951Z"
