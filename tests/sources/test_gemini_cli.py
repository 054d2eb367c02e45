"""Gemini CLI parser: the source suite on tests/data fixtures of both file forms, then its
rules: replies re-written by id, `$set` and `$rewindTo`, a resumed session's second file, a
migration's duplicate, subagents, tokens, and files still being written."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import orjson
import pytest

from tests.conftest import DATA
from tests.sources.suite import SourceSuite, parse_all, parse_all_items
from tracehouse.model import ids
from tracehouse.model.tables import MESSAGES
from tracehouse.parsers import gemini_cli
from tracehouse.parsers.base import ParseOptions
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.state.watermark import Action
from tracehouse.store.sqlite.store import SqliteStore

HOME = DATA / "gemini" / "home"
ROOT = HOME / ".gemini"
MESSAGE_COLUMNS = MESSAGES.names
CHATS = ROOT / "tmp" / "weather-app" / "chats"
A = "aaaa1111-0000-4000-8000-000000000001"
B = "bbbb2222-0000-4000-8000-000000000002"
D = "dddd4444-0000-4000-8000-000000000004"


@pytest.fixture
def parser():
    return gemini_cli


@pytest.fixture
def units():
    return gemini_cli.discover([ROOT])


@pytest.fixture
def bad_unit(tmp_path):
    good = (CHATS / "session-2026-04-20T10-00-bbbb2222.jsonl").read_bytes().splitlines(True)
    new = b'{"timestamp":"2026-04-20T10:00:02.000Z","type":"totally-new-record"}\n'
    body = [*good[:2], b"{not json at all\n", b"[1, 2, 3]\n", new, *good[2:]]
    chats = tmp_path / ".gemini" / "tmp" / "p" / "chats"
    chats.mkdir(parents=True)
    (chats / "session-2026-04-20T10-00-bbbb2222.jsonl").write_bytes(b"".join(body))
    (unit,) = gemini_cli.discover([tmp_path / ".gemini"])
    return unit


class TestGeminiContract(SourceSuite):
    pass


def unit_named(name: str):  # type: ignore[no-untyped-def]
    return next(u for u in gemini_cli.discover([ROOT]) if u.key.endswith(name))


def test_discovery_finds_every_chat_under_both_project_directories() -> None:
    names = sorted(os.path.relpath(u.key, ROOT / "tmp") for u in gemini_cli.discover([ROOT]))
    assert len(names) == 7 and "weather-app/logs.json" in names
    assert sum(n.endswith("session-2026-03-10T09-15-aaaa1111.json") for n in names) == 2
    kid = unit_named("kid123.jsonl")
    assert kid.info == {"child": True, "parent": B}
    # The project's path is found when a chat is read, not at every run's discovery: from the
    # slug directory's marker, or through projects.json's hash of the path.
    assert parse_all(gemini_cli, kid)[0].session["workspace_path"] == "/home/dev/weather-app"
    hashed = next(u for u in gemini_cli.discover([ROOT]) if "weather-app" not in u.key)
    assert parse_all(gemini_cli, hashed)[0].session["workspace_path"] == "/home/dev/weather-app"


def test_a_reply_written_again_keeps_its_place_with_its_tool_calls() -> None:
    item, frames, rejects = parse_all(gemini_cli, unit_named("10-00-bbbb2222.jsonl"))
    assert rejects == []
    messages = frames["messages"].sort("seq")
    # b-g1 was written without and again with its call; b-u2 and b-g2 were rewound away
    assert messages.get_column("source_message_id").to_list() == ["b-u1", "b-g1", "b-u3", "b-g3"]
    calls = frames["tool_calls"].sort("seq")
    assert calls.get_column("tool_name").to_list() == ["glob", "codebase_investigator"]
    assert calls.get_column("spawned_session_id").to_list()[1] == ids.session_id(
        "gemini-cli", "kid123"
    )
    assert item.session["title"] == "Find the forecast off-by-one bug"  # the last `$set`
    assert item.session["updated_at"] == "2026-04-20T10:02:40.100Z"
    g3 = messages.row(3, named=True)
    assert g3["thinking"] == "Delegating: A subagent can search the code base."
    user = messages.row(2, named=True)
    assert orjson.loads(user["metadata"]) == {
        "display_content": "@investigator find the timezone bug"
    }


def test_tokens_are_each_replys_summed_per_turn_and_session() -> None:
    item, frames, _ = parse_all(gemini_cli, unit_named("10-00-bbbb2222.jsonl"))
    s = item.session
    # b-g1 counted once (its re-write replaces it), b-g2 rewound away. In the ledger's
    # convention input holds the tool-use prompt (5) and output the thoughts (20 + 40).
    assert (s["input_tokens"], s["output_tokens"], s["cached_input_tokens"]) == (3005, 190, 1500)
    assert (s["reasoning_tokens"], s["total_tokens"]) == (60, 3195)
    assert frames["turns"].sort("seq").get_column("total_tokens").to_list() == [1070, 2125]


def test_a_legacy_document_maps_notices_errors_and_the_project() -> None:
    legacy = unit_named("weather-app/chats/session-2026-03-10T09-15-aaaa1111.json")
    item, frames, rejects = parse_all(gemini_cli, legacy)
    assert rejects == []
    s = item.session
    assert s["source_session_id"] == f"{A}@2026-03-10T09-15" and s["label"] == "gm-aaaa1111"
    assert (s["workspace_path"], s["project"]) == ("/home/dev/weather-app", "weather-app")
    assert (s["turn_count"], s["message_count"], s["tool_call_count"]) == (2, 6, 2)
    messages = frames["messages"].sort("seq")
    assert messages.get_column("message_type").to_list() == [
        "user", "assistant", "host", "user", "assistant", "host"]  # fmt: skip
    turns = frames["turns"].sort("seq")
    assert turns.get_column("status").to_list() == ["completed", "error"]
    calls = frames["tool_calls"].sort("seq").rows(named=True)
    assert calls[0]["result"].startswith("from flask import Flask")
    assert calls[0]["status"] == "completed"
    assert calls[1]["status"] == "failed" and "code 127" in calls[1]["error"]
    assert s["model"] == "gemini-2.5-flash"


def test_a_resumed_session_and_a_migrated_copy(tmp_path: Path) -> None:
    """Two files with one sessionId and different starts are two recordings; the same file in
    the hash and the slug directory is one session."""
    store = SqliteStore(tmp_path / "ledger.db")
    report = sync(store, SyncOptions(sources={"gemini-cli": [ROOT]}, workers=0))
    assert report.ok and not report.rejects
    rows = store.query("SELECT source_session_id, parent_source_session_id, is_subagent"
                       " FROM sessions ORDER BY source_session_id")  # fmt: skip
    assert [r["source_session_id"] for r in rows] == [
        f"{A}@2026-03-10T09-15",
        f"{B}@2026-04-20T10-00",
        f"{B}@2026-04-21T08-30",
        f"{D}@logs",  # its chat is gone; logs.json kept its prompts
        "kid123",
    ]
    kid = rows[-1]
    assert kid["is_subagent"] == 1 and kid["parent_source_session_id"] == f"{B}@2026-04-20T10-00"
    linked = store.query("SELECT count(*) AS n FROM sessions c JOIN sessions p"
                         " ON p.session_id = c.parent_session_id")  # fmt: skip
    assert linked[0]["n"] == 1
    again = sync(store, SyncOptions(sources={"gemini-cli": [ROOT]}, workers=0))
    assert again.rows_written == 0
    store.close()


def test_a_rewrite_with_the_same_bytes_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / ".gemini"
    shutil.copytree(ROOT, root)
    store = SqliteStore(tmp_path / "ledger.db")
    assert sync(store, SyncOptions(sources={"gemini-cli": [root]}, workers=0)).ok
    path = root / "tmp" / "weather-app" / "chats" / "session-2026-03-10T09-15-aaaa1111.json"
    path.write_bytes(path.read_bytes())  # the CLI rewrites the whole document on every change
    os.utime(path, ns=(time.time_ns(), time.time_ns()))
    report = sync(store, SyncOptions(sources={"gemini-cli": [root]}, workers=0))
    assert report.parsed == 1 and report.rows_written == 0
    store.close()


def test_a_line_being_written_is_waited_for_then_refused(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "p" / "chats"
    chats.mkdir(parents=True)
    good = (CHATS / "session-2026-04-21T08-30-bbbb2222.jsonl").read_bytes()
    path = chats / "session-2026-04-21T08-30-bbbb2222.jsonl"
    path.write_bytes(good + b'{"id": "c-u2", "type": "us')
    (unit,) = gemini_cli.discover([tmp_path / ".gemini"])
    fresh = gemini_cli.parse(unit, None, ParseOptions(now=time.time()))
    assert fresh.action is Action.WAIT and fresh.item is None and not fresh.rejects
    quiet = gemini_cli.parse(unit, None, ParseOptions(now=time.time() + 60))
    assert quiet.item is not None
    assert [(r.location, r.reason) for r in quiet.rejects] == [
        ("line 5", "the file ends in the middle of a record")]  # fmt: skip


def test_an_empty_or_header_only_file_is_no_session() -> None:
    result = gemini_cli.parse(unit_named("cccc3333.jsonl"), None, ParseOptions(now=time.time()))
    assert result.item is None and result.watermark is not None and not result.rejects
    items, _, _ = parse_all_items(gemini_cli, unit_named("cccc3333.jsonl"))
    assert items == []


def test_the_prompt_log_recovers_sessions_whose_chat_is_gone() -> None:
    logs = unit_named("logs.json")
    result = gemini_cli.parse(logs, None, ParseOptions(now=time.time()))
    assert result.rejects == [] and result.accounting["prompt"] == 4
    (item,) = result.extra  # A's prompts belong to its chat file
    s = item.session
    assert s["source_session_id"] == f"{D}@logs" and s["label"] == "gm-dddd4444"
    assert s["metadata"]["recovered_from"] == "logs.json" and s["message_count"] == 2
    assert (s["title"], s["project"]) == ("rename the CLI flag --days to --horizon", "weather-app")
    messages = result.rows["messages"]
    assert [m[MESSAGE_COLUMNS.index("content")] for m in messages] == [
        "rename the CLI flag --days to --horizon", "/quit"]  # fmt: skip


def test_a_malformed_prompt_log_entry_is_a_reject_naming_it(tmp_path: Path) -> None:
    project = tmp_path / ".gemini" / "tmp" / "p"
    project.mkdir(parents=True)
    entries = [{"sessionId": D, "messageId": 0, "timestamp": "2026-02-01T08:00:00.000Z",
                "type": "user", "message": "hello"}, {"sessionId": 7}, "text"]  # fmt: skip
    (project / "logs.json").write_bytes(orjson.dumps(entries))
    (unit,) = gemini_cli.discover([tmp_path / ".gemini"])
    result = gemini_cli.parse(unit, None, ParseOptions(now=time.time()))
    assert [r.location for r in result.rejects] == ["[1]", "[2]"]
    assert len(result.extra) == 1


def test_sync_live_follows_gemini_chats_as_they_are_written(tmp_path: Path) -> None:
    """The watcher needs nothing but the registry line: a reply appended to a `.jsonl` chat,
    and the same reply written again with its tool call, arrive as one message with its call."""
    import threading

    from tests.pipeline.test_live import count, wait_for
    from tracehouse.pipeline.live import LiveOptions, run_live

    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    chat = (
        home
        / ".gemini"
        / "tmp"
        / "weather-app"
        / "chats"
        / "session-2026-04-21T08-30-bbbb2222.jsonl"
    )
    ledger = tmp_path / "l.db"
    store = SqliteStore(ledger)
    stop = threading.Event()
    options = SyncOptions(sources={"gemini-cli": [home / ".gemini"]})
    thread = threading.Thread(
        target=run_live, args=(store, options, LiveOptions(), stop, lambda _: None)
    )
    thread.start()
    try:
        wait_for(lambda: count(ledger, "sessions") >= 5)
        reply = {"id": "c-g2", "timestamp": "2026-04-21T08:31:00.000Z", "type": "gemini",
                 "content": "Retrying the edit.", "model": "gemini-3-pro-preview"}  # fmt: skip
        with chat.open("ab") as f:
            f.write(orjson.dumps(reply) + b"\n")
        wait_for(lambda: count(ledger, "messages", "source_message_id = 'c-g2'") == 1)
        call = {"id": "replace_2", "name": "replace", "args": {}, "status": "success",
                "result": [], "timestamp": "2026-04-21T08:31:01.000Z"}  # fmt: skip
        with chat.open("ab") as f:
            f.write(orjson.dumps({**reply, "toolCalls": [call]}) + b"\n")
        wait_for(lambda: count(ledger, "tool_calls", "source_tool_call_id = 'replace_2'") == 1)
        assert count(ledger, "messages", "source_message_id = 'c-g2'") == 1
    finally:
        stop.set()
        thread.join(timeout=10)
        store.close()
