"""Cline: the source suite on tests/data (a task's `ui_messages.json`), then its rules: the
task's prompt and the user's feedback open turns, usage per request with its cost, a cancelled
request as a notice, commands as calls, the working directory from the request."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions
from tests.sources.suite import SourceSuite
from tracehouse.parsers import cline

STORAGE = DATA / "cline" / "home" / ".config" / "Code" / "User" / "globalStorage"
ROOT = STORAGE / "saoudrizwan.claude-dev"


@pytest.fixture
def parser():
    return cline


@pytest.fixture
def units():
    return cline.discover([ROOT])


@pytest.fixture
def bad_unit(tmp_path):
    (source,) = cline.discover([ROOT])
    records = json.loads(source.path.read_text())
    records[2:2] = [7, {"ts": 1767644899100, "type": "say", "say": "totally-new-record"}]
    target = tmp_path / "tasks" / "1767644899093" / "ui_messages.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(records))
    (unit,) = cline.discover([tmp_path])
    return unit


class TestClineContract(SourceSuite):
    reject_locations = ("[",)


def test_default_roots_cover_the_editors_on_each_os(tmp_path) -> None:
    roots = cline.default_roots(tmp_path, {"APPDATA": "C:/Users/dev/AppData/Roaming"})
    names = {str(r) for r in roots}
    assert str(tmp_path / ".config" / "Code" / "User" / "globalStorage" /
               "saoudrizwan.claude-dev") in names  # fmt: skip
    assert any("Application Support/Cursor" in n for n in names)
    assert any(n.startswith("C:/Users/dev/AppData/Roaming/VSCodium") for n in names)


def test_a_task_reads_with_turns_usage_and_calls(units) -> None:
    ((item, rows),) = sessions(cline, units).values()
    session = item.session
    assert item.source_session_id == "1767644899093"
    assert session["title"] == "what does this project do?"
    assert session["workspace_path"] == "/home/dev/site" and session["entrypoint"] == "ide"
    assert session["model"] == "anthropic/claude-sonnet-4.5"
    assert session["input_tokens"] == 1146 + 20032 + 545 + 50858
    assert session["output_tokens"] == 447 and session["cached_input_tokens"] == 70890
    assert session["metadata"]["cost_usd"] == pytest.approx(0.0228)
    assert session["turn_count"] == 2
    calls = rows["tool_calls"].sort("seq").to_dicts()
    assert [c["tool_name"] for c in calls] == ["readFile", "execute_command"]
    assert calls[1]["result"] == "1 passed"
    notices = rows["messages"].filter(rows["messages"]["message_type"] == "host").sort("seq")
    assert notices["content"].to_list()[0] == "request failed with status 400"
    replies = rows["messages"].filter(rows["messages"]["role"] == "assistant").sort("seq")
    assert replies["thinking"][0] == "Read app.py first."
    assert replies["content"].to_list()[1:] == [
        "A Flask app with one route.",
        "Added GET /health; the test passes.",
    ]
