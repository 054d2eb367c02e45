"""Zed's agent threads: the source suite on a `threads.db` written in its shape
(`zed_threads.py`), then its rules: zstd and plain JSON threads, prompts with their mentions,
answers with their thinking, calls with their results (an error failed), the subagent thread
linked to its lead, times from the table, the last request's tokens kept aside."""

from __future__ import annotations

import json
import sqlite3

import pytest
import zstandard

from tests.sources.agents import sessions
from tests.sources.suite import SourceSuite, parse_all_items
from tests.sources.zed_threads import HELPER, LEAD, write_threads
from tracehouse.model import ids
from tracehouse.parsers import zed


@pytest.fixture
def root(tmp_path):
    return write_threads(tmp_path / "zed")


@pytest.fixture
def parser():
    return zed


@pytest.fixture
def units(root):
    return zed.discover([root])


@pytest.fixture
def bad_unit(root):
    db = root / "threads" / "threads.db"
    with sqlite3.connect(db) as conn:
        broken = zstandard.ZstdCompressor().compress(b'{"version": "0.3.0", "messages": [')
        rows = [("t-broken", "zstd", broken), ("t-old", "json", b'{"version": "0.2.0"}'),
                ("t-garbage", "zstd", b"\x28\xb5\x2f\xfd not a frame"),
                ("t-new", "json", json.dumps({"version": "0.3.0", "messages": [
                    {"User": {"id": "u", "content": [{"Text": "hi"}]}},
                    {"totally-new-record": {}}]}).encode())]  # fmt: skip
        at = "2026-02-07T00:00:00+00:00"
        for sid, kind, data in rows:
            conn.execute("INSERT INTO threads VALUES (?, 'x', ?, ?, ?, NULL, NULL, NULL, ?)",
                         (sid, at, kind, data, at))  # fmt: skip
    (unit,) = zed.discover([root])
    return unit


class TestZedContract(SourceSuite):
    reject_locations = ("session ",)


def test_a_thread_that_cannot_be_read_is_a_reject_naming_it(bad_unit) -> None:
    _items, _frames, rejects = parse_all_items(zed, bad_unit)
    said = {r.location: r.reason for r in rejects}
    assert "not zstd data" in said["session t-garbage"]
    assert "thread version '0.2.0'" in said["session t-old"]


def test_a_thread_with_its_thinking_calls_and_results(units) -> None:
    found = sessions(zed, units)
    item, rows = found[LEAD]
    session = item.session
    assert session["title"] == "Find the failing route"
    assert session["created_at"] == "2026-02-06T02:09:58.002Z"
    assert session["updated_at"] == "2026-02-06T02:10:31.190Z"
    assert (session["model"], session["llm_provider"]) == ("Gemini 2.5 Flash", "google")
    assert session["workspace_path"] == "/home/dev/site" and session["git_branch"] == "main"
    assert session["git_remote"] == "git@github.com:dev/site.git"
    # Zed keeps the last request's usage per prompt, not what the turn spent: aside, not counted
    assert session["input_tokens"] is None
    messages = rows["messages"].sort("seq").to_dicts()
    assert messages[0]["content"] == "Why does /health return 500? See "
    assert json.loads(messages[0]["metadata"])["last_request_tokens"]["input_tokens"] == 2234
    assert json.loads(messages[0]["metadata"])["mentions"] == 1
    assert messages[1]["thinking"] == "I should list the project first."
    assert messages[-1]["content"] == "`health()` divides by zero: that is the 500."
    calls = {c["source_tool_call_id"]: c for c in rows["tool_calls"].to_dicts()}
    listed, opened = calls["list_directory-6"], calls["read_file-7"]
    assert listed["status"] == "failed" and listed["error"].startswith("Path /home/dev/frontend")
    assert opened["status"] == "completed" and opened["result"] == "def health():\n    return 1 / 0"
    assert opened["message_id"] == messages[2]["message_id"]


def test_a_subagent_thread_is_linked_to_its_lead(units) -> None:
    item, _rows = sessions(zed, units)[HELPER]
    assert item.session["is_subagent"] and item.session["parent_source_session_id"] == LEAD
    assert item.session["parent_session_id"] == ids.session_id("zed", LEAD)
    assert item.session["workspace_path"] == "/home/dev/site"  # folder_paths


def test_the_data_dir_on_each_system(tmp_path) -> None:
    roots = zed.default_roots(tmp_path, {"XDG_DATA_HOME": str(tmp_path / "data")})
    assert tmp_path / "data" / "zed" in roots
    assert tmp_path / "Library" / "Application Support" / "Zed" in roots
