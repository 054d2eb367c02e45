"""OpenHands: the source suite on tests/data (a conversation of the file store: its metadata
and one file per event), then its rules: the prompt, the system prompt in the first turn, the
model's words and calls with their outcomes (an exit code other than 0 failed), the host's
errors, tokens from the running totals, the times the server wrote in UTC."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions
from tests.sources.suite import SourceSuite
from tracehouse.parsers import openhands

ROOT = DATA / "openhands" / "home" / ".openhands"
CID = "0a1b2c3d4e5f40718293a4b5c6d7e8f9"


@pytest.fixture
def parser():
    return openhands


@pytest.fixture
def units():
    return openhands.discover([ROOT])


@pytest.fixture
def bad_unit(tmp_path):
    shutil.copytree(ROOT, tmp_path / "store")
    events = tmp_path / "store" / "sessions" / CID / "events"
    (events / "13.json").write_text("{not json")
    (events / "14.json").write_text("[1, 2]")
    new = {"id": 15, "source": "agent", "action": "totally-new-record", "args": {}}
    (events / "15.json").write_text(json.dumps(new))
    (unit,) = openhands.discover([tmp_path / "store"])
    return unit


class TestOpenHandsContract(SourceSuite):
    reject_locations = ("events/",)


def test_a_conversation_with_its_calls_outcomes_and_tokens(units) -> None:
    ((item, rows),) = sessions(openhands, units).values()
    session = item.session
    assert item.source_session_id == CID
    assert session["title"] == "Fix the failing test"
    assert (session["git_branch"], session["git_remote"]) == ("fix-tests", "dev/site")
    assert session["created_at"] == "2025-10-07T15:37:19.869Z"
    assert session["updated_at"] == "2025-10-07T15:40:10.500Z"
    assert session["model"] == "openrouter/anthropic/claude-sonnet-4.5"
    assert session["turn_count"] == 1  # the system prompt opens no turn of its own
    # the running totals: the metadata's 3,350 in and 95 out, 1,400 of them read from the cache
    assert (session["input_tokens"], session["output_tokens"]) == (3350, 95)
    assert session["cached_input_tokens"] == 1400 and session["reasoning_tokens"] is None
    messages = rows["messages"].sort("seq").to_dicts()
    assert [(m["message_type"], m["content"]) for m in messages] == [
        ("system", "You are OpenHands agent, a helpful AI assistant."),
        ("user", "Fix the failing test"),
        ("host", "Missing required parameters for function 'execute_bash': {'security_risk'}"),
        ("assistant", "Let me run the tests first."),
        ("assistant", "The status is wrong."),
        ("assistant", "The test passes now."),
    ]
    assert messages[1]["created_at"] == "2025-10-07T15:37:50.295Z"
    calls = {c["source_tool_call_id"]: c for c in rows["tool_calls"].to_dicts()}
    tests, edit = calls["toolu_01"], calls["toolu_02"]
    assert tests["tool_name"] == "execute_bash" and json.loads(tests["params"])["command"] == (
        "pytest -q"
    )
    assert tests["status"] == "failed" and tests["result"] == "1 failed, 4 passed"
    assert json.loads(tests["metadata"]) == {"exit_code": 1}
    assert tests["message_id"] == messages[3]["message_id"]
    assert edit["tool_name"] == "str_replace_editor" and edit["status"] == "completed"
    assert "thought" not in json.loads(edit["params"])


def test_an_untitled_conversation_takes_its_first_prompt(tmp_path) -> None:
    shutil.copytree(ROOT, tmp_path / "store")
    metadata = tmp_path / "store" / "sessions" / CID / "metadata.json"
    meta = json.loads(metadata.read_text())
    metadata.write_text(json.dumps({**meta, "title": f"Conversation {CID[:5]}"}))
    ((item, _),) = sessions(openhands, openhands.discover([tmp_path / "store"])).values()
    assert item.session["title"] == "Fix the failing test"


def test_a_runs_bytes_read_count_the_events_too(units) -> None:
    """The unit is `metadata.json`, but a read reads every event beside it: a run's report
    counts their bytes (it counted the metadata's alone)."""
    import time

    from tracehouse.parsers.base import ParseOptions

    for unit in units:
        folder = unit.path.parent
        on_disk = sum(p.stat().st_size for p in [folder / "metadata.json",
                                                  *(folder / "events").glob("*.json")])  # fmt: skip
        result = openhands.parse(unit, None, ParseOptions(now=time.time() + 3600))
        assert result.bytes_read == on_disk > (folder / "metadata.json").stat().st_size
