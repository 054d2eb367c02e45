"""Goose: the source suite on a `sessions.db` written in its shape (`goose_sessions.py`) and on
an older release's JSONL session (tests/data/goose), then its rules: prompts, answers with their
thinking, tool requests and responses (an error status failed, old and new result shapes), the
host's notifications, times, the session's token totals kept aside."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions
from tests.sources.goose_sessions import SID, write_sessions
from tests.sources.suite import SourceSuite
from tracehouse.parsers import goose

OLD = DATA / "goose" / "home" / ".local" / "share" / "goose"


@pytest.fixture
def root(tmp_path):
    shutil.copytree(OLD, tmp_path / "goose")
    return write_sessions(tmp_path / "goose")


@pytest.fixture
def parser():
    return goose


@pytest.fixture
def units(root):
    return goose.discover([root])


@pytest.fixture
def bad_unit(root):
    with sqlite3.connect(root / "sessions" / "sessions.db") as conn:
        sql = "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES"
        for content in ("{not json", "[1, 2]", '[{"type": "totally-new-record"}]', '{"a": 1}'):
            conn.execute(f"{sql} (?, 'assistant', ?, 1764694800)", (SID, content))
    return next(u for u in goose.discover([root]) if u.key.endswith(".db"))


class TestGooseContract(SourceSuite):
    reject_locations = ("session ",)


def test_a_session_of_the_database(units) -> None:
    item, rows = sessions(goose, units)[SID]
    session = item.session
    assert session["title"] == "List the project files"
    assert session["workspace_path"] == "/home/dev/site"
    assert session["created_at"] == "2025-12-02T16:58:55.000Z"
    assert session["updated_at"] == "2025-12-02T17:01:10.000Z"
    # Goose sums its tokens per session only: kept in metadata, not spread over turns
    assert session["input_tokens"] is None
    assert session["metadata"]["tokens"]["accumulated_input_tokens"] == 5200
    messages = rows["messages"].sort("seq").to_dicts()
    assert [(m["message_type"], m["content"]) for m in messages] == [
        ("user", "List the files"),
        ("assistant", "Listing them."),
        ("assistant", None),
        ("host", "Compacting the conversation"),
        ("assistant", None),
        ("assistant", "There are two files."),
    ]
    assert messages[1]["thinking"] == "The shell lists them."
    assert messages[0]["created_at"] == "2025-12-02T16:58:55.000Z"
    calls = {c["source_tool_call_id"]: c for c in rows["tool_calls"].to_dicts()}
    assert calls["toolu_1"]["tool_name"] == "developer__shell"
    assert json.loads(calls["toolu_1"]["params"]) == {"command": "ls"}
    assert calls["toolu_1"]["result"] == "app.py\nREADME.md"
    assert calls["toolu_1"]["status"] == "completed"
    assert calls["toolu_2"]["status"] == "failed"
    assert calls["toolu_2"]["error"] == "-32603: File not found: /x"


def test_an_older_releases_jsonl_session(units) -> None:
    item, rows = sessions(goose, units)["20241224_1"]
    assert item.session["title"] == "Fix the README"
    assert item.session["workspace_path"] == "/home/dev/notes"
    (call,) = rows["tool_calls"].to_dicts()
    assert call["result"] == "# Notse" and call["status"] == "completed"  # the legacy value
    assert item.session["created_at"] == "2024-12-24T00:26:40.000Z"


def test_the_placeholder_name_is_no_title(root) -> None:
    with sqlite3.connect(root / "sessions" / "sessions.db") as conn:
        conn.execute("UPDATE sessions SET name = 'CLI Session'")
    item, _ = sessions(goose, goose.discover([root]))[SID]
    assert item.session["title"] == "List the files"
