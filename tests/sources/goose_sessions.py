"""A Goose `sessions/sessions.db` in the shape release 1.20 and later keep (schema version 5, as
in a real database of December 2025; `Message` as `crates/goose/src/conversation/message.rs`
writes it), written by the tests (the repository keeps no `*.db`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

SID = "20251202_1"
SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT
    CURRENT_TIMESTAMP);
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT
    NULL DEFAULT '', user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT
    'user', working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}',
    total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, accumulated_total_tokens
    INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, schedule_id
    TEXT, recipe_json TEXT, user_recipe_values_json TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL
    REFERENCES sessions(id), role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp
    INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER,
    metadata_json TEXT);
"""


def call(cid: str, name: str, arguments: dict) -> dict:  # type: ignore[type-arg]
    return {
        "type": "toolRequest",
        "id": cid,
        "toolCall": {"status": "success", "value": {"name": name, "arguments": arguments}},
    }


MESSAGES = [
    ("user", [{"type": "text", "text": "List the files"}]),
    ("assistant", [{"type": "thinking", "thinking": "The shell lists them.", "signature": "sig"},
                   {"type": "text", "text": "Listing them."},
                   call("toolu_1", "developer__shell", {"command": "ls"})]),
    ("user", [{"type": "toolResponse", "id": "toolu_1", "toolResult": {"status": "success",
              "value": {"content": [{"type": "text", "text": "app.py\nREADME.md"}],
                        "isError": False}}}]),
    ("assistant", [call("toolu_2", "developer__text_editor", {"command": "view", "path": "/x"})]),
    ("user", [{"type": "toolResponse", "id": "toolu_2",
               "toolResult": {"status": "error", "error": "-32603: File not found: /x"}}]),
    ("assistant", [{"type": "systemNotification", "notificationType": "inlineMessage",
                    "msg": "Compacting the conversation"}]),
    ("assistant", [{"type": "text", "text": "There are two files."}]),
]  # fmt: skip


def write_sessions(root: Path) -> Path:
    """Goose's data dir under `root` holding one session; returns it."""
    db = root / "sessions" / "sessions.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO sessions (id, name, working_dir, created_at, updated_at,"
                 " accumulated_input_tokens, accumulated_output_tokens, accumulated_total_tokens)"
                 " VALUES (?, 'List the project files', '/home/dev/site', '2025-12-02 16:58:55',"
                 " '2025-12-02 17:01:10', 5200, 140, 5340)", (SID,))  # fmt: skip
    sql = "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES"
    for n, (role, content) in enumerate(MESSAGES):
        conn.execute(f"{sql} (?, ?, ?, ?)", (SID, role, json.dumps(content), 1764694735 + n))
    conn.commit()
    conn.close()
    return root
