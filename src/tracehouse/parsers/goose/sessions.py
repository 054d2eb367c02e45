"""Goose's sessions → ledger rows (README.md here has the mapping).

From release 1.20 on, one SQLite database, `sessions/sessions.db` in Goose's data dir:
`sessions` (id `YYYYMMDD_N`, name, working dir, times, token totals) and `messages` (role,
`content_json`, `created_timestamp` in Unix seconds). Before, one JSONL file per session in the
same folder: a first line of the session's metadata, then one message per line. A message is
Goose's `Message`: `{role, created, content: [{type: text | toolRequest | toolResponse |
thinking | …}]}`, a tool call and its result `{status: success, value} | {status: error,
error}`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracehouse.model.contract import ImportItem, Reject
from tracehouse.model.fields import iso_seconds, iso_utc
from tracehouse.parsers.base import (
    SHAPE_ERRORS,
    ParseOptions,
    Unit,
    UnitResult,
    shape_error,
)
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.database import built, parse_database, plan_database
from tracehouse.parsers.kit.document import Read, parse_document
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.sqlite_snapshot import read
from tracehouse.parsers.kit.untrusted import decode_json, items, mapping, not_json, token
from tracehouse.state.watermark import Action, quick_plan

PROVIDER = "goose"
DATABASE = "sessions/sessions.db"
LAYOUT = Layout(PROVIDER, (DATABASE, "sessions/*.jsonl"))
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots
# The host's: what Goose shows or asks, not what the model said.
NOTICES = {"systemNotification", "toolConfirmationRequest", "actionRequired"}
QUIET = {"image", "redactedThinking", "jsonRenderSpec", "frontendToolRequest"}
TOTALS = ("accumulated_input_tokens", "accumulated_output_tokens", "accumulated_total_tokens")
PLACEHOLDER = "CLI Session"  # a session's name until Goose names it


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Goose's data dir: `$XDG_DATA_HOME/goose` (`~/.local/share/goose`, macOS too, where it
    follows XDG), `GOOSE_PATH_ROOT/data`, Windows' `%APPDATA%\\Block\\goose\\data`, and the
    `~/.goose` of old releases."""
    data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    roots = [data / "goose", home / ".goose"]
    if env.get("GOOSE_PATH_ROOT"):
        roots.insert(0, Path(env["GOOSE_PATH_ROOT"]) / "data")
    appdata = Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
    return [*roots, appdata / "Block" / "goose" / "data"]


def plan_unit(unit: Unit, cursor: Mapping[str, Any] | None, full: bool) -> int | None:
    """The database with its `-wal`; an old session file as any file is, by one stat."""
    if unit.key.endswith(".db"):
        return plan_database(unit, cursor, full)
    try:
        st = os.stat(unit.key)
    except OSError:
        return 0  # gone or unreadable: its parse says which
    return None if not full and quick_plan(st, cursor) is Action.SKIP else st.st_size


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    if not unit.key.endswith(".db"):
        return parse_document(PROVIDER, unit, cursor, options, _jsonl)

    def stamps(conn: sqlite3.Connection) -> list[tuple[str, str]]:
        per = {str(s): [n, last] for s, n, last in read(conn, "SELECT session_id, count(*),"
               " max(id) FROM messages GROUP BY 1")}  # fmt: skip
        rows = read(conn, "SELECT id, updated_at FROM sessions ORDER BY created_at, id")
        return [(str(s), orjson.dumps([at, per.get(str(s))]).decode()) for s, at in rows]

    def build(conn: sqlite3.Connection, sid: str, result: UnitResult) -> list[ImportItem]:
        names = [str(c[1]) for c in read(conn, "PRAGMA table_info(sessions)")]
        (values,) = read(conn, "SELECT * FROM sessions WHERE id = ?", (sid,))
        row = dict(zip(names, values, strict=True))
        talk = Conversation(PROVIDER, sid, unit.key, options.max_field)
        talk.seen(iso_utc(row.get("created_at")))
        sql = "SELECT id, role, content_json, created_timestamp FROM messages WHERE session_id = ?"
        for mid, role, content, created in read(conn, f"{sql} ORDER BY id", (sid,)):
            decoded, problem = decode_json(content, list)
            try:
                if problem is not None:
                    raise ValueError(f"content_json is not a JSON list: {problem}")
                result.accounting[_message(talk, str(mid), str(role), decoded,
                                           iso_seconds(created))] += 1  # fmt: skip
            except SHAPE_ERRORS as exc:
                where = f"session {token(sid)} message {token(mid)}"
                result.rejects.append(Reject(PROVIDER, unit.key, where, shape_error(exc)))
                result.accounting["rejected"] += 1
        talk.seen(iso_utc(row.get("updated_at")))
        stamp = orjson.dumps([row.get("updated_at")]).decode()
        return built(talk, result, _fields(row), stamp, options.now)

    return parse_database(PROVIDER, unit, cursor, options, ("sessions", "messages"), stamps,
                          build)  # fmt: skip


def _jsonl(unit: Unit, data: bytes, options: ParseOptions) -> Read:
    """An old release's session file: its metadata, then a message a line."""
    read_ = Read()
    talk = Conversation(PROVIDER, unit.path.stem, unit.key, options.max_field)
    meta: Mapping[str, Any] = {}
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        record, problem = decode_json(line, dict)
        if problem is not None:
            read_.incomplete = read_.incomplete or not_json(problem)
            read_.problems.append((f"line {number}", f"not a JSON object: {problem}"))
            continue
        if number == 1 and "role" not in record:
            meta = record
            continue
        try:
            read_.count(_message(talk, f"line:{number}", str(record.get("role")),
                                 items(record.get("content")),
                                 iso_seconds(record.get("created"))))  # fmt: skip
        except SHAPE_ERRORS as exc:
            read_.problems.append((f"line {number}", shape_error(exc)))
    read_.sessions.append((talk, _fields(meta)))
    return read_


def _message(talk: Conversation, key: str, role: str, content: list[Any], at: str | None
             ) -> str:  # fmt: skip
    parts = [mapping(p) for p in content]
    text = "\n\n".join(str(p.get("text") or "") for p in parts if p.get("type") == "text")
    for n, part in enumerate(parts):
        kind = str(part.get("type"))
        if kind == "toolResponse":
            outcome = mapping(part.get("toolResult"))
            value = outcome.get("value")
            shown = mapping(value).get("content") if isinstance(value, dict) else value
            output = "\n".join(str(mapping(c).get("text") or "") for c in items(shown)) or None
            failed = outcome.get("status") == "error" or mapping(value).get("isError") is True
            talk.result(str(part.get("id")), str(outcome.get("error") or output or "") or None,
                        at, failed=failed)  # fmt: skip
        elif kind in NOTICES:
            said = part.get("msg") or part.get("prompt") or mapping(part.get("data")).get("message")
            talk.notice(f"{key}:{n}", str(said or kind), at, {"notice": kind})
        elif kind not in {"text", "toolRequest", "thinking", *QUIET}:
            talk.unknown(f"content.{kind}")
    if role == "user":
        if text:
            talk.prompt(key, text, at)
        return "user" if text else "tool_result"
    if role != "assistant":
        return talk.unknown(f"role.{role}")
    thinking = "\n\n".join(str(p.get("thinking") or "") for p in parts
                           if p.get("type") == "thinking") or None  # fmt: skip
    said = talk.reply(key, text, at, thinking=thinking)
    for n, part in enumerate(p for p in parts if p.get("type") == "toolRequest"):
        call = mapping(part.get("toolCall"))
        asked = mapping(call.get("value"))
        talk.call(str(part.get("id") or f"{key}:{n}"), str(asked.get("name") or "tool"),
                  asked.get("arguments") if call.get("status") == "success" else
                  {"error": call.get("error")}, at, message_id=said)  # fmt: skip
    return "assistant"


def _fields(row: Mapping[str, Any]) -> dict[str, Any]:
    name = row.get("name") or row.get("description")
    workspace = row.get("working_dir")
    return {
        "title": name if isinstance(name, str) and name.strip() and name != PLACEHOLDER else None,
        "workspace_path": workspace if isinstance(workspace, str) else None,
        "entrypoint": row.get("session_type"),
        # the session's totals as Goose sums them, not per turn: kept, not counted
        "metadata": {"tokens": {k: row.get(k) for k in TOTALS if row.get(k) is not None} or None,
                     "schedule_id": row.get("schedule_id")},
    }  # fmt: skip
