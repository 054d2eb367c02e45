"""Warp's Agent Mode: the source suite on a `warp.sqlite` written in its shape (`warp_db.py`),
then its rules: the typed prompts (the agent's own continuations open no turn), the commands
the agent ran with their output and exit codes (a person's own commands left out), the
conversation's usage kept aside, the answers (a protobuf) not read."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.sources.agents import sessions
from tests.sources.suite import SourceSuite
from tests.sources.warp_db import CONVERSATION, write_warp
from tracehouse.parsers import warp


@pytest.fixture
def root(tmp_path):
    return write_warp(tmp_path / "warp-terminal")


@pytest.fixture
def parser():
    return warp


@pytest.fixture
def units(root):
    return warp.discover([root])


@pytest.fixture
def bad_unit(root):
    with sqlite3.connect(root / "warp.sqlite") as conn:
        conn.execute("INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input,"
                     " output_status) VALUES ('x', 'broken', '2026-01-01 00:00:00', '{not json',"
                     " '\"Completed\"')")  # fmt: skip
        new = '[{"totally-new-record": {}}]'
        conn.execute("INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input,"
                     " output_status) VALUES ('y', ?, '2026-01-01 00:00:00', ?,"
                     " '\"Completed\"')", (CONVERSATION, new))  # fmt: skip
    (unit,) = warp.discover([root])
    return unit


class TestWarpContract(SourceSuite):
    reject_locations = ("session ",)


def test_a_conversation_with_its_prompts_and_commands(units) -> None:
    ((item, rows),) = sessions(warp, units).values()
    session = item.session
    assert item.source_session_id == CONVERSATION
    assert session["title"] == "Which bar do I use?"
    assert session["model"] == "gpt-5 (high reasoning)" and session["workspace_path"] == "/home/dev"
    assert session["turn_count"] == 2  # two typed prompts; the continuation joins the first
    assert session["created_at"] == "2025-12-31T19:09:31.418Z"
    assert session["input_tokens"] is None
    assert session["metadata"]["usage"]["token_usage"][0]["total_tokens"] == 281740
    prompts = rows["messages"].filter(rows["messages"]["role"] == "user").sort("seq")
    assert prompts["content"].to_list() == ["Which bar do I use?", "And the launcher?"]
    assert rows["messages"].filter(rows["messages"]["role"] == "assistant").height == 0
    calls = {c["source_tool_call_id"]: c for c in rows["tool_calls"].to_dicts()}
    assert set(calls) == {"call_1", "call_2"}  # not the person's own `ls`
    assert json.loads(calls["call_1"]["params"]) == {"command": "pgrep -x waybar"}
    assert calls["call_1"]["result"] == "4242" and calls["call_1"]["status"] == "completed"
    assert calls["call_2"]["status"] == "failed"
    assert json.loads(calls["call_2"]["metadata"]) == {"exit_code": 2}


def test_each_turn_has_the_model_of_its_own_exchanges(root) -> None:
    with sqlite3.connect(root / "warp.sqlite") as conn:
        conn.execute("UPDATE ai_queries SET model_id = 'claude 4 sonnet'"
                     " WHERE exchange_id = 'ex-2'")
    ((_item, rows),) = sessions(warp, warp.discover([root])).values()
    models = rows["turns"].sort("seq")["model"].to_list()
    assert models == ["gpt-5 (high reasoning)", "claude 4 sonnet"]
