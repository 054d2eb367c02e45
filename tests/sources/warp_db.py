"""A Warp `warp.sqlite` holding an Agent Mode conversation, in the shape of a real database of
December 2025 (Diesel schema 20251111230915: the tables tracehouse reads, with the columns it
reads), written by the tests (the repository keeps no database)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

CONVERSATION = "8cfe75bc-357f-4247-9bfb-66eb1bfe2154"
SCHEMA = """
CREATE TABLE ai_queries (id INTEGER PRIMARY KEY AUTOINCREMENT, exchange_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL, start_ts DATETIME NOT NULL, input TEXT NOT NULL,
    working_directory TEXT, output_status TEXT NOT NULL, model_id TEXT NOT NULL DEFAULT '',
    planning_model_id TEXT NOT NULL DEFAULT '', coding_model_id TEXT NOT NULL DEFAULT '');
CREATE TABLE agent_conversations (id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT
    NOT NULL, conversation_data TEXT NOT NULL, last_modified_at TIMESTAMP NOT NULL);
CREATE TABLE agent_tasks (id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL,
    task_id TEXT NOT NULL, task BLOB NOT NULL, last_modified_at TIMESTAMP NOT NULL);
CREATE TABLE blocks (id INTEGER PRIMARY KEY AUTOINCREMENT, pane_leaf_uuid BLOB,
    stylized_command BLOB, stylized_output BLOB, pwd TEXT, git_branch TEXT, exit_code INTEGER,
    did_execute BOOLEAN, completed_ts DATETIME, start_ts DATETIME, shell TEXT, user TEXT,
    host TEXT, block_id TEXT, ai_metadata TEXT);
"""


def query(text: str) -> str:
    return json.dumps([{"Query": {"text": text, "context": [
        {"Directory": {"pwd": "/home/dev", "home_dir": "/home/dev"}},
        {"CurrentTime": {"current_time": "2025-12-31T22:09:31.417977722+03:00"}}],
        "referenced_attachments": {}}}])  # fmt: skip


def write_warp(root: Path) -> Path:
    """Warp's state dir under `root` with one conversation; returns it."""
    root.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(root / "warp.sqlite")
    conn.executescript(SCHEMA)
    asks = [("2025-12-31 19:09:31.418070496", query("Which bar do I use?")),
            ("2025-12-31 19:10:21.222627316", "[]"),
            ("2025-12-31 19:12:00.000000001", query("And the launcher?"))]  # fmt: skip
    for n, (at, given) in enumerate(asks):
        conn.execute("INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input,"
                     " working_directory, output_status, model_id) VALUES (?, ?, ?, ?,"
                     " '/home/dev', '\"Completed\"', 'gpt-5 (high reasoning)')",
                     (f"ex-{n}", CONVERSATION, at, given))  # fmt: skip
    blocks = [(b"\x1b[1mpgrep -x waybar\x1b[0m\r", b"4242\r\n", 0, "2025-12-31 19:10:25.1",
               "call_1"),
              (b"\x1b[1mls /nope\x1b[0m\r", b"ls: cannot access '/nope'\r\n", 2,
               "2025-12-31 19:10:40.5", "call_2")]  # fmt: skip
    for command, output, code, at, call in blocks:
        meta = {"requested_command_action_id": call, "conversation_id": CONVERSATION,
                "subagent_task_id": None, "has_agent_written_to_block": False}  # fmt: skip
        conn.execute("INSERT INTO blocks (stylized_command, stylized_output, pwd, exit_code,"
                     " start_ts, completed_ts, block_id, ai_metadata) VALUES (?, ?,"
                     " '/home/dev', ?, ?, ?, ?, ?)",
                     (command, output, code, at, at, call, json.dumps(meta)))  # fmt: skip
    conn.execute(
        "INSERT INTO blocks (stylized_command, exit_code, start_ts) VALUES"
        " (X'6c73', 0, '2025-12-31 19:11:00')"
    )  # a command the person ran: not the agent's
    usage = {"conversation_usage_metadata": {"was_summarized": False, "credits_spent": 19.69,
             "token_usage": [{"model_id": "gpt-5 (high reasoning)", "total_tokens": 281740,
                              "byok_tokens": 0}]}}  # fmt: skip
    conn.execute("INSERT INTO agent_conversations (conversation_id, conversation_data,"
                 " last_modified_at) VALUES (?, ?, '2025-12-31 19:20:40')",
                 (CONVERSATION, json.dumps(usage)))  # fmt: skip
    conn.execute(
        "INSERT INTO agent_tasks (conversation_id, task_id, task, last_modified_at)"
        " VALUES (?, 'task-1', X'0a0474617368', '2025-12-31 19:20:40')",
        (CONVERSATION,),
    )
    conn.commit()
    conn.close()
    return root
