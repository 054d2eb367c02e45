"""Crush: the source suite on a database made here in WAL mode (its rows only in the
`-wal`, as on a running machine), then its rules: results from `tool` messages, inline
`<think>`, times in seconds, an agent's task session linked to the call that spawned it, the
placeholder title replaced by the first prompt, and only changed sessions read again."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.sources.agents import sessions
from tests.sources.suite import SourceSuite, parse_all_items
from tracehouse.model import ids
from tracehouse.parsers import crush
from tracehouse.parsers.base import ParseOptions

SESSION_DDL = """CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT,
    title TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL
    DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
    updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT)"""
MESSAGE_DDL = """CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
    role TEXT NOT NULL, parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT)"""
MAIN, TASK = "15a5fe15-8a06-4822-84a9-c007b0b52bb0", "call_task01"


def part(kind: str, **data: object) -> dict:
    return {"type": kind, "data": data}


def make_database(project: Path, extra: list[tuple] = ()) -> sqlite3.Connection:
    folder = project / ".crush"
    folder.mkdir(parents=True)
    conn = sqlite3.connect(folder / "crush.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute(SESSION_DDL)
    conn.execute(MESSAGE_DDL)
    conn.execute(
        "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?)",
        (MAIN, None, "New Session", 4, 15821, 14, 0.58, 1754605696, 1754605244, None),
    )
    conn.execute(
        "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?)",
        (TASK, MAIN, "Find the config", 2, 900, 20, 0.01, 1754605260, 1754605250, None),
    )
    rows = [
        (
            "m1",
            MAIN,
            "user",
            [part("text", text="Why is tmux not loading?")],
            None,
            1754605244,
            None,
            None,
        ),
        (
            "m2",
            MAIN,
            "assistant",
            [
                part("text", text="<think>Check the conf.</think>Looking."),
                part(
                    "tool_call",
                    id="call_ls",
                    name="ls",
                    input=json.dumps({"path": "/home/dev"}),
                    type="function",
                    finished=True,
                ),
                part("tool_call", id=TASK, name="agent", input="{not json either", finished=True),
                part("finish", reason="tool_use", time=1754605248),
            ],
            "openai/gpt-4.1",
            1754605245,
            1754605248,
            "openrouter",
        ),
        (
            "m3",
            MAIN,
            "tool",
            [
                part(
                    "tool_result",
                    tool_call_id="call_ls",
                    name="ls",
                    content="- .tmux.conf",
                    is_error=False,
                ),
                part(
                    "tool_result",
                    tool_call_id=TASK,
                    name="agent",
                    content="no such file",
                    is_error=True,
                ),
            ],
            None,
            1754605249,
            None,
            "openrouter",
        ),
        (
            "m4",
            MAIN,
            "assistant",
            [
                part("text", text="The file is missing."),
                part("finish", reason="end_turn", time=1754605255),
            ],
            "openai/gpt-4.1",
            1754605250,
            1754605255,
            "openrouter",
        ),
        (
            "t1",
            TASK,
            "user",
            [part("text", text="Find the tmux config")],
            None,
            1754605250,
            None,
            None,
        ),
        (
            "t2",
            TASK,
            "assistant",
            [part("text", text="Not found.")],
            "openai/gpt-4.1",
            1754605251,
            1754605252,
            "openrouter",
        ),
        *extra,
    ]
    for mid, sid, role, parts, model, created, finished, provider in rows:
        conn.execute("INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?)",
                     (mid, sid, role, parts if isinstance(parts, str) else json.dumps(parts),
                      model, created, created, finished, provider))  # fmt: skip
    return conn


@pytest.fixture
def parser():
    return crush


@pytest.fixture
def project(tmp_path):
    conn = make_database(tmp_path / "dotfiles")
    yield tmp_path
    conn.close()


@pytest.fixture
def units(project):
    return crush.discover([project])


@pytest.fixture
def bad_unit(tmp_path):
    conn = make_database(tmp_path / "bad", [
        ("b1", MAIN, "assistant", "{not json", None, 1754605256, None, None),
        ("b2", MAIN, "assistant", [part("totally-new-record", text="?")], None, 1754605257, None,
         None),
    ])  # fmt: skip
    (unit,) = crush.discover([tmp_path])
    yield unit
    conn.close()


class TestCrushContract(SourceSuite):
    reject_locations = ("session ",)


def test_the_rows_in_the_wal_are_read_and_the_task_is_linked(units) -> None:
    (unit,) = units
    assert unit.path.stat().st_size <= 4096  # only the header: every row is in the -wal
    found = sessions(crush, units)
    main, rows = found[MAIN]
    session = main.session
    assert session["title"] == "Why is tmux not loading?"  # not "New Session"
    assert session["created_at"] == "2025-08-07T22:20:44.000Z"
    assert session["workspace_path"] == str(unit.path.parent.parent)
    assert session["input_tokens"] is None  # Crush records the last request's, not a sum
    assert session["metadata"]["cost_usd"] == 0.58
    reply = rows["messages"].sort("seq").row(1, named=True)
    assert (reply["content"], reply["thinking"]) == ("Looking.", "Check the conf.")
    calls = {c["source_tool_call_id"]: c for c in rows["tool_calls"].to_dicts()}
    assert calls["call_ls"]["result"] == "- .tmux.conf"
    assert calls[TASK]["status"] == "failed" and calls[TASK]["params"] == '"{not json either"'
    task = found[TASK][0].session
    assert task["is_subagent"] and task["parent_session_id"] == ids.session_id("crush", MAIN)
    assert task["spawn_source_tool_call_id"] == TASK and task["title"] == "Find the config"


def test_only_changed_sessions_are_read_again(project) -> None:
    (unit,) = crush.discover([project])
    first = crush.parse(unit, None, ParseOptions())
    assert len(first.extra) == 2
    cursor = {**first.watermark.cursor, "state": first.watermark.state}
    assert crush.plan_unit(unit, first.cursor, False) is None
    conn = sqlite3.connect(unit.key, isolation_level=None)
    conn.execute(
        "INSERT INTO messages VALUES ('t3', ?, 'user', ?, NULL, 1754605300,"
        " 1754605300, NULL, NULL)",
        (TASK, json.dumps([part("text", text="again")])),
    )
    conn.close()
    assert crush.plan_unit(unit, first.cursor, False)
    again = crush.parse(unit, cursor, ParseOptions())
    assert [i.source_session_id for i in again.extra] == [TASK]
    assert parse_all_items(crush, unit)[2] == []


def test_a_database_from_before_later_columns_reads(tmp_path) -> None:
    """The first databases had no `provider` or `finished_at` on messages (later migrations
    added them): columns are read by name, none assumed beyond the message's own."""
    folder = tmp_path / "old" / ".crush"
    folder.mkdir(parents=True)
    conn = sqlite3.connect(folder / "crush.db")
    conn.execute(SESSION_DDL)
    conn.execute("CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT"
                 " NOT NULL, parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER"
                 " NOT NULL, updated_at INTEGER NOT NULL)")  # fmt: skip
    conn.execute(
        "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?)",
        (MAIN, None, "New Session", 2, 0, 0, 0.0, 1754605246, 1754605244, None),
    )
    conn.execute(
        "INSERT INTO messages VALUES ('o1', ?, 'user', ?, NULL, 1754605244, 1754605244)",
        (MAIN, json.dumps([part("text", text="hello")])),
    )
    conn.execute("INSERT INTO messages VALUES ('o2', ?, 'assistant', ?, 'gpt-4.1', 1754605245,"
                 " 1754605245)", (MAIN, json.dumps([part("text", text="hi")])))  # fmt: skip
    conn.commit()
    conn.close()
    found = sessions(crush, crush.discover([tmp_path]))
    item, _rows = found[MAIN]
    assert item.session["message_count"] == 2 and item.session["model"] == "gpt-4.1"


def test_a_session_row_with_any_text_is_read(tmp_path) -> None:
    """A real Crush database whose session title held `—` was rejected whole: the session row
    goes into the fingerprint's salt, which was encoded as ASCII (issue #64)."""
    conn = make_database(tmp_path / "proj")
    conn.execute("UPDATE sessions SET title = ? WHERE id = ?", ("Fix — 修复 🚀 \u202e", TASK))
    (unit,) = crush.discover([tmp_path])
    result = crush.parse(unit, None, ParseOptions())
    conn.close()
    assert not result.rejects
    titles = {i.session["title"] for i in [result.item, *result.extra] if i is not None}
    assert "Fix — 修复 🚀 \u202e" in titles
    again = crush.parse(unit, None, ParseOptions())
    assert [i.fingerprint for i in [again.item, *again.extra] if i] == [
        i.fingerprint for i in [result.item, *result.extra] if i
    ]
