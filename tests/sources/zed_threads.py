"""A Zed `threads/threads.db` in the shape Zed's agent keeps (the table of
`crates/agent/src/db.rs`, thread JSON version 0.3.0, as in a real database of February 2026): a
zstd-compressed thread and, as plain JSON, a subagent thread it spawned. Written by the tests
(the repository keeps no `*.db`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import zstandard

LEAD = "c1b34853-0e99-4358-9565-7aedc0fb53eb"
HELPER = "c1b34853-0e99-4358-9565-7aedc0fb53ec"
ASKED = "491b60cf-a4f3-4fbf-8db9-1adb85ca7f43"
MISSING = "Path /home/dev/frontend not found in project"

SNAPSHOT = {
    "worktree_snapshots": [
        {
            "worktree_path": "/home/dev/site",
            "git_state": {
                "remote_url": "git@github.com:dev/site.git",
                "head_sha": "2a540f5",
                "current_branch": "main",
                "diff": "",
            },
        }
    ],
    "unsaved_buffer_paths": [],
}
LEAD_THREAD = {
    "title": "Find the failing route",
    "version": "0.3.0",
    "profile": "write",
    "completion_mode": "normal",
    "imported": False,
    "detailed_summary": None,
    "updated_at": "2026-02-06T02:10:31.190699425Z",
    "initial_project_snapshot": SNAPSHOT,
    "cumulative_token_usage": {},
    "model": {"provider": "google", "model": "Gemini 2.5 Flash"},
    "request_token_usage": {
        ASKED: {"input_tokens": 2234, "output_tokens": 24, "cache_read_input_tokens": 6791}
    },
    "messages": [
        {
            "User": {
                "id": ASKED,
                "content": [
                    {"Text": "Why does /health return 500? See "},
                    {
                        "Mention": {
                            "uri": {"File": {"abs_path": "/home/dev/site/app.py"}},
                            "content": "def health(): ...",
                        }
                    },
                ],
            }
        },
        {
            "Agent": {
                "content": [
                    {"Thinking": {"text": "I should list the project first.", "signature": None}},
                    {
                        "ToolUse": {
                            "id": "list_directory-6",
                            "name": "list_directory",
                            "raw_input": '{"path":"/home/dev/frontend"}',
                            "input": {"path": "/home/dev/frontend"},
                            "is_input_complete": True,
                            "thought_signature": "CiQBvj72",
                        }
                    },
                ],
                "tool_results": {
                    "list_directory-6": {
                        "tool_use_id": "list_directory-6",
                        "tool_name": "list_directory",
                        "is_error": True,
                        "content": {"Text": "Path /home/dev/frontend not found in project"},
                        "output": "Path /home/dev/frontend not found in project",
                    }
                },
                "reasoning_details": None,
            }
        },
        {
            "Agent": {
                "content": [
                    {"Text": "Reading the route."},
                    {
                        "ToolUse": {
                            "id": "read_file-7",
                            "name": "read_file",
                            "raw_input": '{"path":"site/app.py"}',
                            "input": {"path": "site/app.py"},
                            "is_input_complete": True,
                        }
                    },
                ],
                "tool_results": {
                    "read_file-7": {
                        "tool_use_id": "read_file-7",
                        "tool_name": "read_file",
                        "is_error": False,
                        "content": {"Text": "def health():\n    return 1 / 0"},
                        "output": None,
                    }
                },
                "reasoning_details": None,
            }
        },
        {
            "Agent": {
                "content": [{"Text": "`health()` divides by zero: that is the 500."}],
                "tool_results": {},
                "reasoning_details": None,
            }
        },
    ],
}
HELPER_THREAD = {
    "title": "Check the tests",
    "version": "0.3.0",
    "profile": "ask",
    "completion_mode": "normal",
    "imported": False,
    "detailed_summary": None,
    "updated_at": "2026-02-06T02:11:02.5Z",
    "initial_project_snapshot": SNAPSHOT,
    "cumulative_token_usage": {"input_tokens": 120, "output_tokens": 8},
    "model": {"provider": "google", "model": "Gemini 2.5 Flash"},
    "request_token_usage": {},
    "messages": [
        {"User": {"id": "b2", "content": [{"Text": "Check that the tests cover /health."}]}},
        {"Agent": {"content": [{"Text": "They do not."}], "tool_results": {}}},
    ],
}


def write_threads(root: Path) -> Path:
    """Zed's data dir under `root` holding the two threads; returns it."""
    db = root / "threads" / "threads.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at"
        " TEXT NOT NULL, data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT,"
        " folder_paths TEXT, folder_paths_order TEXT, created_at TEXT)"
    )
    lead = zstandard.ZstdCompressor(level=3).compress(json.dumps(LEAD_THREAD).encode())
    conn.execute(
        "INSERT INTO threads VALUES (?, ?, ?, 'zstd', ?, NULL, NULL, NULL, ?)",
        (
            LEAD,
            "Find the failing route",
            "2026-02-06T02:10:31.190699425+00:00",
            lead,
            "2026-02-06T02:09:58.002113001+00:00",
        ),
    )
    conn.execute(
        "INSERT INTO threads VALUES (?, ?, ?, 'json', ?, ?, ?, '0', ?)",
        (
            HELPER,
            "Check the tests",
            "2026-02-06T02:11:02.500000000+00:00",
            json.dumps(HELPER_THREAD).encode(),
            LEAD,
            "/home/dev/site",
            "2026-02-06T02:10:40.000000000+00:00",
        ),
    )
    conn.commit()
    conn.close()
    return root
