"""Continue: the source suite on tests/data (the index and two sessions of the releases seen,
1.0 and 1.2), then its rules: prompts, answers and their thinking (a `thinking` item, or
`<think>` inside a 2025 answer), calls with their outputs and how they ended, the start from the
index, `file://` workspaces, no title from an auto-title that is the model's thoughts."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions
from tests.sources.suite import SourceSuite
from tracehouse.parsers import continue_dev

ROOT = DATA / "continue" / "home" / ".continue"
AGENT = "5a1b0c2d-0000-4000-8000-000000000001"
CHAT = "5a1b0c2d-0000-4000-8000-000000000002"


@pytest.fixture
def parser():
    return continue_dev


@pytest.fixture
def units():
    return continue_dev.discover([ROOT])


@pytest.fixture
def bad_unit(tmp_path):
    document = json.loads((ROOT / "sessions" / f"{AGENT}.json").read_text())
    document["history"][2:2] = [7, {"message": {"role": "totally-new-record", "id": "x"}},
                                {"message": {"role": "assistant", "toolCalls": 5}}]  # fmt: skip
    target = tmp_path / "sessions" / f"{AGENT}.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(document))
    (unit,) = continue_dev.discover([tmp_path])
    return unit


class TestContinueContract(SourceSuite):
    reject_locations = ("history[",)


def test_the_index_is_no_session_and_each_file_is_one(units) -> None:
    assert sorted(u.path.name for u in units) == [f"{AGENT}.json", f"{CHAT}.json"]


def test_an_agent_session_with_its_thinking_calls_and_outcomes(units) -> None:
    (item, rows) = sessions(continue_dev, units)[AGENT]
    session = item.session
    assert session["title"] == "List the logs and read the readme"
    assert session["created_at"] == "2026-02-20T10:13:14.527Z"  # the index's dateCreated
    assert session["workspace_path"] == "c:/laragon/www/hms" and session["project"] == "hms"
    assert session["model"] == "GPT-5.2" and session["llm_provider"] == "openai"
    assert session["metadata"]["mode"] == "agent" and session["turn_count"] == 2
    messages = rows["messages"].sort("seq").to_dicts()
    assert [(m["message_type"], m["content"]) for m in messages] == [
        ("user", "List the logs and read the readme"),
        ("assistant", None),  # the answer that made the two calls
        ("assistant", "Here is the log and the readme."),
        ("user", "Now delete the log"),
        ("assistant", "Deleting it."),
        ("assistant", "You stopped the command; nothing was deleted."),
    ]
    assert messages[1]["thinking"] == "**Listing first**\n\nI should list the logs."
    assert json.loads(messages[0]["metadata"]) == {"context_items": 1}  # README.md, attached
    calls = {c["source_tool_call_id"]: c for c in rows["tool_calls"].to_dicts()}
    assert calls["call_read"]["status"] == "completed"
    assert calls["call_read"]["result"] == "# hms\nA hospital system."
    assert json.loads(calls["call_ls"]["params"]) == {"dirPath": "storage/logs"}
    assert calls["call_ls"]["message_id"] == messages[1]["message_id"]
    # errored: the output the model was shown, as result and error alike
    assert calls["call_grep"]["status"] == "failed"
    assert calls["call_grep"]["error"] == calls["call_grep"]["result"] == "ripgrep is not installed"
    # canceled before it ran: failed, no output
    assert calls["call_rm"]["status"] == "failed" and calls["call_rm"]["result"] is None
    assert all(m["created_at"] is None for m in messages)  # Continue writes no times


def test_a_2025_chat_keeps_its_think_block_as_thinking_and_no_thoughts_as_title(units) -> None:
    (item, rows) = sessions(continue_dev, units)[CHAT]
    session = item.session
    assert session["title"] == "hi! what is 2+2?"  # not the auto-title `<think>\nOkay, the user`
    assert session["workspace_path"] == "/home/dev/notes"
    assert session["model"] == "deepseek-r1:7b"
    (answer,) = rows["messages"].filter(rows["messages"]["role"] == "assistant").to_dicts()
    assert answer["thinking"] == "Okay, the user asks a sum."
    assert answer["content"] == "2 + 2 = 4 😊"


def test_the_root_moves_with_continue_global_dir(tmp_path) -> None:
    assert continue_dev.default_roots(tmp_path, {}) == [tmp_path / ".continue"]
    elsewhere = tmp_path / "cfg"
    assert continue_dev.default_roots(tmp_path, {"CONTINUE_GLOBAL_DIR": str(elsewhere)}) == [
        elsewhere
    ]
