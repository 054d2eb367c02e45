"""Kimi CLI: the source suite on tests/data (a wire log, and a 1.17 subagent's context file),
then its rules: streamed content parts make one reply, usage from `StatusUpdate`, the work dir
from `kimi.json`, subagents linked to their session."""

from __future__ import annotations

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions, spoiled_copy
from tests.sources.suite import SourceSuite
from tracehouse.model import ids
from tracehouse.parsers import kimi_cli

ROOT = DATA / "kimi" / "home" / ".kimi"
MAIN, PARENT = "5a7b1c2d-0000-4000-8000-000000000001", "5a7b1c2d-0000-4000-8000-000000000002"


@pytest.fixture
def parser():
    return kimi_cli


@pytest.fixture
def units():
    return kimi_cli.discover([ROOT])


@pytest.fixture
def bad_unit(tmp_path):
    wire = next(u for u in kimi_cli.discover([ROOT]) if u.info["form"] == "wire")
    target = tmp_path / "sessions" / "h" / MAIN / "wire.jsonl"
    spoiled_copy(wire.path, target, ["{not json", '{"timestamp": 1, "message": {"type":'
                                     ' "totally-new-record"}}', '"text"'], 2)  # fmt: skip
    (unit,) = kimi_cli.discover([tmp_path])
    return unit


class TestKimiContract(SourceSuite):
    pass


def test_the_wire_log_is_the_session_and_the_context_beside_it_is_not_read(units) -> None:
    forms = sorted((u.info["form"], u.path.name) for u in units)
    assert forms == [("context", "context_sub_1.jsonl"), ("wire", "wire.jsonl")]


def test_a_wire_log_reads_with_streamed_replies_usage_and_an_interrupted_turn(units) -> None:
    found = sessions(kimi_cli, units)
    item, rows = found[MAIN]
    session = item.session
    assert session["title"] == "List the files here"
    assert session["workspace_path"] == "/home/dev/site"  # md5 of the path names the folder
    assert session["created_at"] == "2026-03-04T02:16:40.500Z"
    assert session["input_tokens"] == 500 + 4000 + 100 + 40 + 4600
    assert session["output_tokens"] == 42 and session["cached_input_tokens"] == 8600
    # Kimi's token_usage has no reasoning count although it reasons: not recorded, never 0
    assert session["reasoning_tokens"] is None
    assert rows["turns"]["reasoning_tokens"].null_count() == len(rows["turns"])
    messages = rows["messages"].sort("seq")
    assert messages["content"].to_list() == [
        "List the files here", "Listing them now.", "Two entries: README.md and src.",
        "and the tests?",
    ]  # fmt: skip
    assert messages["thinking"][1] == "Use the shell."
    (call,) = rows["tool_calls"].to_dicts()
    assert call["params"] == '{"command":"ls"}' and call["result"] == "README.md\nsrc\n"
    assert call["message_id"] == messages["message_id"][1]
    assert rows["turns"].sort("seq")["status"].to_list() == ["completed", "aborted"]


def test_a_subagent_context_is_a_child_session(units) -> None:
    item, rows = sessions(kimi_cli, units)[f"{PARENT}/sub_1"]
    assert item.session["is_subagent"] and item.session["parent_source_session_id"] == PARENT
    assert item.session["parent_session_id"] == ids.session_id("kimi-cli", PARENT)
    assert item.session["metadata"] == {"context_tokens": 2300}
    assert item.session["input_tokens"] is None  # a context file records no usage
    (call,) = rows["tool_calls"].to_dicts()
    assert "42 src/app.py" in call["result"] and call["status"] == "completed"
