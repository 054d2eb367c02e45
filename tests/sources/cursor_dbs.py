"""Small Cursor databases in the shape of each storage generation (FORMATS §3.2), built by the
tests: C0 chat tabs, C1 inline workspace composers, C2 inline global composers, C3 split
composers with bubble rows, C4 `_v:10` with workspace heads, C5 `_v:16` with global headers, a
sub-composer pair, empty drafts, deleted rows, and a workspace database whose rows are only in
its WAL. Values are JSON text in `ItemTable` / `cursorDiskKV`, as Cursor writes them."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = (
    "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
    "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
)
T0 = 1_750_000_000_000  # ms


def new_db(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    for sql in SCHEMA:
        conn.execute(sql)
    return conn


def put(conn: sqlite3.Connection, table: str, key: str | None, value: Any) -> None:
    text = value if value is None or isinstance(value, str) else json.dumps(value)
    conn.execute(f"INSERT INTO {table} (key, value) VALUES (?, ?)", (key, text))


def bubble(bid: str, kind: Any, text: str = "", **extra: Any) -> dict[str, Any]:
    return {"_v": 3, "bubbleId": bid, "type": kind, "text": text, "codeBlocks": [], **extra}


def composer(cid: str, version: int | None, headers: list[str], **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "composerId": cid,
        "createdAt": T0,
        "lastUpdatedAt": T0 + 60_000,
        "status": "completed",
        "unifiedMode": "agent",
        "fullConversationHeadersOnly": [{"bubbleId": h, "type": 1} for h in headers],
        **extra,
    }
    if version is not None:
        data["_v"] = version
    return data


def split(conn: sqlite3.Connection, cid: str, version: int, bubbles: list[dict], **extra: Any):
    """A C3+ composer: headers in conversation order; bubble rows written in reverse key order
    so that neither rowid nor key order is the conversation order."""
    put(
        conn,
        "cursorDiskKV",
        f"composerData:{cid}",
        composer(cid, version, [b["bubbleId"] for b in bubbles], **extra),
    )
    for b in sorted(bubbles, key=lambda b: b["bubbleId"], reverse=True):
        put(conn, "cursorDiskKV", f"bubbleId:{cid}:{b['bubbleId']}", b)


def global_db(user: Path) -> Path:
    path = user / "globalStorage" / "state.vscdb"
    conn = new_db(path)
    put(conn, "ItemTable", "cursorAuth/accessToken", "SECRET-TOKEN-never-read")
    put(conn, "ItemTable", None, "a row with a NULL key")
    # C2: conversation inline, timing in ms
    put(
        conn,
        "cursorDiskKV",
        "composerData:c2-inline",
        {
            "composerId": "c2-inline",
            "name": "Inline chat",
            "createdAt": T0,
            "lastUpdatedAt": T0 + 5000,
            "conversation": [
                {"bubbleId": "b1", "type": 1, "text": "why is the build red?"},
                {
                    "bubbleId": "b2",
                    "type": 2,
                    "text": "A missing import.",
                    "timingInfo": {"clientStartTime": T0 + 1000, "clientEndTime": T0 + 2000},
                    "tokenCount": {"inputTokens": 120, "outputTokens": 30},
                },
            ],
        },
    )
    # C3: split, a tool call, thinking, files; rows out of order
    split(
        conn,
        "c3-split",
        3,
        [
            bubble("z1", 1, "list the files", relevantFiles=["src/app.py"]),
            bubble(
                "y2",
                2,
                "",
                toolFormerData={
                    "tool": 6,
                    "name": "list_dir",
                    "toolCallId": "call-1",
                    "status": "completed",
                    "rawArgs": json.dumps({"relative_workspace_path": "src"}),
                    "result": json.dumps({"files": ["app.py"]}),
                },
                # as C3 writes it: a relative start clock beside absolute epoch-ms times
                timingInfo={
                    "clientStartTime": 2315.4,
                    "clientRpcSendTime": T0 + 60_000,
                    "clientSettleTime": T0 + 60_400,
                    "clientEndTime": T0 + 63_000,
                },
            ),
            bubble(
                "x3",
                2,
                "There is one file.",
                thinking={"text": "Look at the listing."},
                tokenCount={"inputTokens": 50, "outputTokens": 10},
                webReferences=[{"url": "https://docs.example/x", "title": "X docs"}],
            ),
            bubble(
                "w4",
                2,
                "",
                toolFormerData={
                    "tool": 15,
                    "name": "run_terminal_cmd",
                    "toolCallId": "call-2",
                    "status": "error",
                    "params": json.dumps({"command": "make"}),
                    "error": "exit 2",
                },
            ),
        ],
        name="Split composer",
    )
    # C4: _v 10, ISO bubble times, model info; parent of a best-of-N child
    split(
        conn,
        "c4-parent",
        10,
        [
            bubble(
                "a1",
                1,
                "",
                richText=json.dumps(
                    {
                        "root": {
                            "children": [
                                {
                                    "type": "paragraph",
                                    "children": [
                                        {"text": "rename "},
                                        {"type": "mention", "text": "@utils"},
                                    ],
                                }
                            ]
                        }
                    }
                ),
                createdAt="2025-10-01T10:00:00.000Z",
            ),
            bubble(
                "a2",
                2,
                "Renamed.",
                createdAt="2025-10-01T10:00:05.000Z",
                modelInfo={"modelName": "gpt-5"},
            ),
        ],
        name="Parent",
        modelConfig={"modelName": "gpt-5"},
        subComposerIds=["c4-child"],
    )
    split(
        conn,
        "c4-child",
        10,
        [
            bubble("k1", 1, "rename (attempt 2)", createdAt="2025-10-01T10:00:01.000Z"),
            bubble("k2", 2, "Done differently.", createdAt="2025-10-01T10:00:04.000Z"),
        ],
        name="Child",
        isBestOfNSubcomposer=True,
    )
    # C5: _v 16, headers in the global ItemTable, an error bubble the headers do not list
    split(
        conn,
        "c5-new",
        16,
        [
            bubble("n1", 1, "audit the code", createdAt="2026-06-12T12:41:01.000Z"),
            bubble("n3", 2, "Audit: fine.", createdAt="2026-06-12T12:41:38.000Z"),
        ],
        name="Audit",
        agentBackend="cursor-agent",
    )
    put(
        conn,
        "cursorDiskKV",
        "bubbleId:c5-new:n2",
        bubble(
            "n2",
            2,
            "",
            createdAt="2026-06-12T12:41:04.000Z",
            modelInfo={"modelName": "claude-4.5-sonnet"},  # the request that failed
            errorDetails={
                "error": {"error": 51, "details": {"title": "Usage limit", "detail": "Upgrade"}}
            },
        ),
    )
    put(
        conn,
        "ItemTable",
        "composer.composerHeaders",
        {
            "allComposers": [
                {
                    "type": "head",
                    "composerId": "c5-new",
                    "name": "Audit",
                    "workspaceIdentifier": {
                        "id": "ws-c5",
                        "uri": {"fsPath": "/home/dev/c5-project", "scheme": "file"},
                    },
                },
            ]
        },
    )
    # drafts (chat + agent, nothing said), a deleted composer and a deleted bubble
    for cid, mode in (("draft-chat", "chat"), ("draft-agent", "agent")):
        put(
            conn,
            "cursorDiskKV",
            f"composerData:{cid}",
            composer(cid, 10, [], status="none", unifiedMode=mode),
        )
    put(conn, "cursorDiskKV", "composerData:deleted", None)
    put(conn, "cursorDiskKV", "bubbleId:c3-split:gone", None)
    conn.close()
    return path


def workspace_db(user: Path, ws: str, folder: str | None) -> Path:
    base = user / "workspaceStorage" / ws
    new_db(base / "state.vscdb").close()
    if folder is not None:
        (base / "workspace.json").write_text(json.dumps({"folder": folder}))
    return base / "state.vscdb"


def chat_workspace(user: Path) -> Path:
    """C0 chat tabs and C4 heads naming the global C3/C4 composers."""
    path = workspace_db(user, "a1b2c3", "file:///home/dev/my%20project")
    conn = sqlite3.connect(path, isolation_level=None)
    put(
        conn,
        "ItemTable",
        "workbench.panel.aichat.view.aichat.chatdata",
        {
            "tabs": [
                {
                    "tabId": "tab-1",
                    "chatTitle": "Old chat",
                    "lastSendTime": T0 - 10**9,
                    "bubbles": [
                        {"type": "user", "id": "u1", "delegate": {"a": "what does this regex do?"}},
                        {
                            "type": "ai",
                            "id": "r1",
                            "rawText": "It matches dates.",
                            "modelType": "gpt-4",
                        },
                        {"type": "user", "id": "u2"},
                    ],
                },
                {"tabId": "tab-empty", "bubbles": [{"type": "user", "id": "u0"}]},
            ]
        },
    )
    put(
        conn,
        "ItemTable",
        "composer.composerData",
        {
            "allComposers": [
                {"type": "head", "composerId": "c3-split"},
                {"type": "head", "composerId": "c4-parent"},
            ]
        },
    )
    put(conn, "ItemTable", "aiService.prompts", [{"text": "what does this regex do?"}])
    conn.close()
    return path


def inline_workspace(user: Path) -> Path:
    """C1: composers with their conversation inline in the workspace DB (a remote folder)."""
    path = workspace_db(user, "d4e5f6", "vscode-remote://ssh-remote%2Bbox/srv/app")
    conn = sqlite3.connect(path, isolation_level=None)
    put(
        conn,
        "ItemTable",
        "composer.composerData",
        {
            "allComposers": [
                {
                    "composerId": "c1-inline",
                    "createdAt": T0 - 10**8,
                    "status": "completed",
                    "conversation": [
                        {
                            "bubbleId": "q",
                            "type": 1,
                            "text": "add a test",
                            "relevantFiles": ["tests/test_a.py"],
                        },
                        {
                            "bubbleId": "r",
                            "type": 2,
                            "text": "Added.",
                            "codeBlocks": [{"code": "assert 1"}],
                        },
                    ],
                },
            ],
            "selectedComposerId": "c1-inline",
        },
    )
    conn.close()
    return path


def wal_only_workspace(user: Path) -> Path:
    """A database whose main file has no tables yet: every row is still in its `-wal` (as
    observed in a 2026 DB). Made by copying the files while the writer holds them open."""
    scratch = user.parent / "wal-scratch"
    scratch.mkdir(exist_ok=True)
    conn = sqlite3.connect(scratch / "state.vscdb", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    for sql in SCHEMA:
        conn.execute(sql)
    put(
        conn,
        "ItemTable",
        "composer.composerData",
        {
            "allComposers": [
                {
                    "composerId": "c1-wal",
                    "createdAt": T0,
                    "conversation": [
                        {"bubbleId": "w1", "type": 1, "text": "only in the WAL"},
                        {"bubbleId": "w2", "type": 2, "text": "Read anyway."},
                    ],
                }
            ]
        },
    )
    target = user / "workspaceStorage" / "0a0b0c"
    target.mkdir(parents=True)
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(scratch / f"state.vscdb{suffix}", target / f"state.vscdb{suffix}")
    (target / "workspace.json").write_text(json.dumps({"folder": "file:///home/dev/wal"}))
    conn.close()
    shutil.rmtree(scratch)
    return target / "state.vscdb"


def make_user_dir(root: Path) -> Path:
    """A Cursor `User` dir holding every generation."""
    user = root / ".config" / "Cursor" / "User"
    global_db(user)
    chat_workspace(user)
    inline_workspace(user)
    wal_only_workspace(user)
    (user / "globalStorage" / "state.vscdb.backup").write_bytes(b"an older copy: never read")
    return user


def bad_global(root: Path) -> Path:
    """Malformed values beside good ones, and a bubble of a type this code does not know."""
    user = root / "bad" / "User"
    path = user / "globalStorage" / "state.vscdb"
    conn = new_db(path)
    put(conn, "cursorDiskKV", "composerData:broken", "{not json")
    split(
        conn,
        "good",
        3,
        [
            bubble("g1", 1, "hello"),
            bubble("g2", "totally-new-record", "from a new kind of bubble"),
        ],
    )
    put(conn, "cursorDiskKV", "bubbleId:good:g3", "{also not json")
    conn.close()
    assert os.path.exists(path)
    return path
