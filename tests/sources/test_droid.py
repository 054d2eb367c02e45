"""Factory Droid: the source suite on tests/data (a transcript with its settings, and a
subagent's), then its rules: prompts, answers with their thinking, calls with their results (an
error failed), the title and work dir of `session_start`, the model and the session's token
totals from the settings beside it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions, spoiled_copy
from tests.sources.suite import SourceSuite
from tracehouse.parsers import droid

ROOT = DATA / "droid" / "home" / ".factory"
SID = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
SUB = "8d2e3f4a-5b6c-4d7e-9f8a-0b1c2d3e4f5a"


@pytest.fixture
def parser():
    return droid


@pytest.fixture
def units():
    return droid.discover([ROOT])


@pytest.fixture
def bad_unit(tmp_path):
    source = next(u for u in droid.discover([ROOT]) if u.path.stem == SID)
    target = tmp_path / "sessions" / "-home-dev-site" / source.path.name
    spoiled_copy(source.path, target, ["{not json", '{"type": "totally-new-record"}', "[1]"], 2)
    (unit,) = droid.discover([tmp_path])
    return unit


class TestDroidContract(SourceSuite):
    pass


def test_a_session_with_its_calls_model_and_totals(units) -> None:
    item, rows = sessions(droid, units)[SID]
    session = item.session
    assert session["title"] == "Fix the health route"
    assert session["workspace_path"] == "/home/dev/site"
    assert session["model"] == "claude-opus-4-7"
    assert session["created_at"] == "2026-03-02T09:00:00.000Z"
    # the settings hold the session's totals only: kept aside, the turns' counts not recorded
    assert session["input_tokens"] is None
    assert session["metadata"]["tokenUsage"]["cacheReadTokens"] == 9000
    messages = rows["messages"].sort("seq").to_dicts()
    assert [m["content"] for m in messages] == [
        "Why does /health return 500?",
        "Reading app.py.",
        None,
        "health() divides by zero.",
    ]
    assert messages[1]["thinking"] == "Read the route first."
    calls = {c["source_tool_call_id"]: c for c in rows["tool_calls"].to_dicts()}
    assert calls["toolu_01"]["result"] == "def health():\n    return 1 / 0"
    assert json.loads(calls["toolu_01"]["params"]) == {"file_path": "/home/dev/site/app.py"}
    assert calls["toolu_02"]["status"] == "failed" and calls["toolu_02"]["error"] == "1 failed"


def test_a_task_tools_session_is_a_subagent(units) -> None:
    item, _rows = sessions(droid, units)[SUB]
    assert item.session["is_subagent"]
    assert item.session["title"] == "Check that tests cover /health."
