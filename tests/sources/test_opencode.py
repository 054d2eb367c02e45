"""OpenCode parser: the source suite on tests/data fixtures of every generation (the Gen 2
database is made here, in WAL mode, its rows still only in the `-wal`), then its rules: turns by
`parentID`, tokens per step, `task` children, errors as notices, the per-session watermark."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.sources.suite import SourceSuite, backfill_twice, parse_all_items
from tracehouse.model import ids
from tracehouse.parsers import opencode
from tracehouse.parsers.base import ParseOptions

ROOT = DATA / "opencode" / "home" / ".local" / "share" / "opencode"
PARENT, CHILD = "ses_3ee0af9f7ffeParentAbCdEf01", "ses_3ee0af8a1ffeChildXyZwVu02"
DB_SESSION = "ses_2c01b767bffeDbSessionQ01"
SESSION_DDL = """CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT,
    slug TEXT, directory TEXT, title TEXT, version TEXT, share_url TEXT, summary_additions INT,
    summary_deletions INT, summary_files INT, summary_diffs TEXT, revert TEXT, permission TEXT,
    time_created INT, time_updated INT, time_compacting INT, time_archived INT,
    workspace_id TEXT, agent TEXT, model TEXT, cost REAL, tokens_input INT, tokens_output INT,
    tokens_reasoning INT, tokens_cache_read INT, tokens_cache_write INT)"""


def make_database(root: Path, *, extra_part: dict | None = None) -> sqlite3.Connection:
    """A Gen 2 `opencode.db` in WAL mode; the returned connection stays open so nothing is
    checkpointed: the rows live only in the `-wal`, as on a running machine."""
    root.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(root / "opencode.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute(SESSION_DDL)
    conn.execute("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INT,"
                 " time_updated INT, data TEXT)")  # fmt: skip
    conn.execute("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,"
                 " time_created INT, time_updated INT, data TEXT)")  # fmt: skip
    model = json.dumps({"id": "moonshotai/kimi-k2.6", "providerID": "opencode"})
    conn.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created,"
        " time_updated, agent, model, cost, tokens_input, tokens_output, tokens_reasoning,"
        " tokens_cache_read, tokens_cache_write) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (DB_SESSION, "global", "swift-falcon", "/home/dev/site", "Deploy the site", "1.17.3",
         1781747802312, 1781747900000, "build", model, 0.07, 8280, 9, 0, 0, 0),
    )  # fmt: skip
    user, reply = "msg_ed4160830001DbUser000001", "msg_ed416086f001DbAsst000001"
    rows = [
        (user, {"role": "user", "time": {"created": 1781747802400}, "agent": "build",
                "model": {"providerID": "opencode", "modelID": "moonshotai/kimi-k2.6"}}),
        (reply, {"parentID": user, "role": "assistant", "mode": "build", "cost": 0.07,
                 "tokens": {"total": 8289, "input": 8280, "output": 9, "reasoning": 0,
                            "cache": {"write": 0, "read": 0}},
                 "modelID": "moonshotai/kimi-k2.6", "providerID": "opencode",
                 "time": {"created": 1781747802500, "completed": 1781747803000},
                 "finish": "stop"}),
    ]  # fmt: skip
    for mid, data in rows:
        conn.execute("INSERT INTO message VALUES (?,?,?,?,?)",
                     (mid, DB_SESSION, 1781747802400, 1781747802400, json.dumps(data)))  # fmt: skip
    parts = [
        ("prt_ed4160835001DbPart000001", user, {"type": "text", "text": "deploy it"}),
        ("prt_ed4161012001DbPart000002", reply, {"type": "step-start"}),
        ("prt_ed4161012002DbPart000003", reply, {"type": "tool", "tool": "bash",
         "callID": "functions.bash:0", "state": {"status": "completed",
         "input": {"command": "fly deploy"}, "output": "deployed",
         "time": {"start": 1781747802600, "end": 1781747802900}}}),
        ("prt_ed4161012003DbPart000004", reply, {"type": "step-finish", "reason": "stop",
         "cost": 0.07, "tokens": {"total": 8289, "input": 8280, "output": 9, "reasoning": 0,
                                  "cache": {"write": 0, "read": 0}}}),
    ]  # fmt: skip
    if extra_part is not None:
        parts.append(("prt_ed4161012004DbPart000005", reply, extra_part))
    for pid, mid, data in parts:
        row = (pid, mid, DB_SESSION, 1781747802400, 1781747802400, json.dumps(data))
        conn.execute("INSERT INTO part VALUES (?,?,?,?,?,?)", row)
    return conn


@pytest.fixture
def parser():
    return opencode


@pytest.fixture
def home(tmp_path):
    root = tmp_path / ".local" / "share" / "opencode"
    shutil.copytree(ROOT, root)
    conn = make_database(root)
    yield root
    conn.close()


@pytest.fixture
def units(home):
    return opencode.discover([home])


@pytest.fixture
def bad_unit(tmp_path):
    root = tmp_path / "bad" / "opencode"
    conn = make_database(root, extra_part={"type": "totally-new-record", "text": "?"})
    conn.execute("INSERT INTO part VALUES ('prt_x', 'msg_ed416086f001DbAsst000001', ?, 0, 0,"
                 " '{not json')", (DB_SESSION,))  # fmt: skip
    (unit,) = opencode.discover([root])
    yield unit
    conn.close()


class TestOpenCodeContract(SourceSuite):
    reject_locations = ("part ", "message ", "session ")


def sessions(units) -> dict[str, tuple]:
    out = {}
    for unit in units:
        items, frames, rejects = parse_all_items(opencode, unit)
        assert rejects == []
        for item in items:
            of = {n: f.filter(f["session_id"] == item.session_id) for n, f in frames.items()}
            out[item.source_session_id] = (item, of)
    return out


def test_every_generation_is_found_and_read(units) -> None:
    kinds = sorted((u.info["kind"], u.info.get("generation")) for u in units)
    assert kinds == [("db", None), ("json", 0), ("json", 1), ("json", 1), ("json", 1)]
    found = sessions(units)
    # the session opened and left (no messages) is not a session
    assert sorted(found) == sorted([PARENT, CHILD, DB_SESSION, "ses_4343439b2ffe8vCbtGr0Gen0a1"])


def test_turns_follow_parent_ids_and_tokens_are_the_steps_sums(units) -> None:
    item, frames = sessions(units)[PARENT]
    turns = frames["turns"].sort("seq")
    assert turns["source_turn_id"].to_list() == ["msg_c0000000001aUserOne000001",
                                                 "msg_c0000000003aUserTwo000001"]  # fmt: skip
    # two steps: 20+10 in, 40+50 out, 1000+1000 cache read, 500 write — not the message's own;
    # the ledger's input holds the cache reads and writes
    assert turns["input_tokens"].to_list() == [30 + 2000 + 500, 7]
    assert turns["cached_input_tokens"].to_list() == [2000, 0]
    assert turns["cache_write_tokens"].to_list() == [500, 0]
    assert turns["total_tokens"].to_list() == [2620, 7]
    assert turns["status"].to_list() == ["completed", "aborted"]
    assert turns["parent_turn_id"].to_list()[1] == turns["turn_id"].to_list()[0]
    assert item.session["total_tokens"] == 2627
    assert item.session["title"] == "Fix the cart total rounding"
    messages = frames["messages"].sort("seq")
    assert messages["message_type"].to_list() == ["user", "assistant", "user", "assistant",
                                                  "host"]  # fmt: skip
    assert messages["thinking"].to_list()[1] == "I should look for the rounding helper first."
    assert messages["content"].to_list()[4] == "MessageAbortedError: The operation was aborted."


def test_a_task_call_spawns_its_child_session(units) -> None:
    found = sessions(units)
    _, frames = found[PARENT]
    calls = frames["tool_calls"].sort("seq")
    assert calls["tool_name"].to_list() == ["task", "edit"]
    assert calls["status"].to_list() == ["completed", "failed"]
    assert calls["error"].to_list()[1] == "oldString not found in content"
    assert calls["spawned_source_session_id"].to_list()[0] == CHILD
    child, kid = found[CHILD]
    assert child.session["is_subagent"] and child.session["parent_source_session_id"] == PARENT
    assert child.session["parent_session_id"] == ids.session_id("opencode", PARENT)
    assert child.session["task_description"] == "Find rounding code"
    assert kid["turns"]["total_tokens"].to_list() == [1234]  # the record's own total
    assert kid["turns"]["reasoning_tokens"].to_list() == [34]


def test_gen0_and_database_sessions(units) -> None:
    found = sessions(units)
    old, frames = found["ses_4343439b2ffe8vCbtGr0Gen0a1"]
    assert old.session["title"] == "Explain surface codes"  # the placeholder title is not one
    assert old.session["workspace_path"] == "/home/dev/notes"  # from the reply's cwd
    context = frames["messages"].sort("seq")["context"].to_list()[1]
    assert json.loads(context) == {"system": ["You are opencode, an interactive CLI tool."]}
    db, frames = found[DB_SESSION]
    assert db.session["model"] == "moonshotai/kimi-k2.6" and db.session["total_tokens"] == 8289
    assert db.session["metadata"]["token_rollup"]["tokens_input"] == 8280
    assert frames["tool_calls"]["source_tool_call_id"].to_list() == ["prt_ed4161012002DbPart000003"]


def test_a_database_rereads_only_the_sessions_that_changed(home) -> None:
    (db,) = [u for u in opencode.discover([home]) if u.info["kind"] == "db"]
    options = ParseOptions(now=2e9)
    first = opencode.parse(db, None, options)
    assert len(first.extra) == 1 and first.watermark is not None
    cursor = {**first.watermark.cursor, "state": first.watermark.state}
    assert opencode.plan_unit(db, cursor, full=False) is None
    writer = sqlite3.connect(home / "opencode.db", isolation_level=None)
    writer.execute("UPDATE session SET title = 'Deploy the site again', time_updated = 1"
                   " WHERE id = ?", (DB_SESSION,))  # fmt: skip
    writer.close()
    assert opencode.plan_unit(db, cursor, full=False)
    again = opencode.parse(db, cursor, options)
    assert [i.session["title"] for i in again.extra] == ["Deploy the site again"]
    # the database changed again, but not this session: it is not read again
    cursor = {**again.watermark.cursor, "state": again.watermark.state}
    writer = sqlite3.connect(home / "opencode.db", isolation_level=None)
    writer.execute("CREATE TABLE todo (session_id TEXT)")
    writer.close()
    assert opencode.plan_unit(db, cursor, full=False)
    assert opencode.parse(db, cursor, options).extra == []


def test_backfill_and_a_rerun_that_writes_nothing(home, tmp_path) -> None:
    assert backfill_twice("opencode", home, tmp_path / "ledger.db") == (4, 1)


def test_a_reply_to_a_queued_prompt_joins_the_turn_it_answers(tmp_path) -> None:
    """A prompt typed while the agent works is written before the reply to the one before: the
    reply names that one (`parentID`) and its tokens, call and end are that turn's."""
    storage = tmp_path / "opencode" / "storage"
    sid, first, second = (
        "ses_3f00000000feQueuedAbCd01",
        "msg_d000000001aUser1",
        "msg_d000000002aUser2",
    )
    messages = {
        first: {"role": "user", "time": {"created": 1769900000000}},
        second: {"role": "user", "time": {"created": 1769900001000}},
        "msg_d000000003aAsst1": {"role": "assistant", "parentID": first, "modelID": "m1",
                                  "providerID": "p1",
                                  "time": {"created": 1769900002000, "completed": 1769900009000}},
        "msg_d000000004aAsst2": {"role": "assistant", "parentID": second, "modelID": "m2",
                                  "providerID": "p2",
                                  "time": {"created": 1769900010000, "completed": 1769900012000}},
    }  # fmt: skip
    tokens = {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    step = {"type": "step-finish", "cost": 0.5, "tokens": tokens}
    parts = {
        first: [{"type": "text", "text": "fix the build"}],
        second: [{"type": "text", "text": "and then run the tests"}],
        "msg_d000000003aAsst1": [
            {"type": "tool", "tool": "bash", "state": {"status": "completed",
             "input": {"command": "make"}, "output": "ok"}},
            {"type": "text", "text": "fixed"}, step],
        "msg_d000000004aAsst2": [{"type": "text", "text": "tests pass"}, step],
    }  # fmt: skip
    session_file = storage / "session" / "global" / f"{sid}.json"
    session_file.parent.mkdir(parents=True)
    session_file.write_text(json.dumps({"id": sid, "directory": "/w", "time": {}}))
    for mid, message in messages.items():
        path = storage / "message" / sid / f"{mid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"id": mid, "sessionID": sid, **message}))
        for k, part in enumerate(parts[mid]):
            path = storage / "part" / mid / f"prt_{mid[4:]}{k}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"id": f"prt_{mid[4:]}{k}", "messageID": mid, **part}))
    item, frames = sessions(opencode.discover([tmp_path / "opencode"]))[sid]
    turns = frames["turns"].sort("seq").to_dicts()
    assert [t["source_turn_id"] for t in turns] == [first, second]
    assert [t["input_tokens"] for t in turns] == [10, 10]
    assert [t["model"] for t in turns] == ["m1", "m2"]
    assert [t["llm_provider"] for t in turns] == ["p1", "p2"]
    assert turns[0]["completed_at"] == "2026-01-31T22:53:29.000Z"
    assert turns[0]["response_message_id"] == ids.message_id(
        "opencode", sid, "msg_d000000003aAsst1"
    )
    (call,) = frames["tool_calls"].to_dicts()
    assert call["turn_id"] == turns[0]["turn_id"]
    assert item.session["input_tokens"] == 20 and item.session["total_tokens"] == 30
