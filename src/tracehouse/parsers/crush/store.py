"""A project's Crush database → ledger rows (README.md here has the mapping, column by column).

`<project>/.crush/crush.db`, in WAL mode: most rows live in `crush.db-wal` until a checkpoint,
so it is only ever read from a private snapshot of both (`kit.database`). `sessions` holds
each session (a `parent_session_id` for an agent's task, whose id is the spawning tool call's)
and `messages` its messages, with `parts`: `text`, `reasoning`, `tool_call` (`input` a JSON
string), `tool_result` and `finish`. Results arrive as `role: tool` messages. Times are Unix
seconds. Crush records no usage per message: a session's `cost` is its USD total, and its
`prompt_tokens`/`completion_tokens` are the last request's (kept in metadata; the ledger's
token counts stay unrecorded rather than wrong).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracehouse.model import ids
from tracehouse.model.contract import ImportItem, Reject
from tracehouse.model.fields import iso_seconds
from tracehouse.parsers.base import (
    SHAPE_ERRORS,
    ParseOptions,
    Unit,
    UnitResult,
    shape_error,
)
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.database import built, parse_database, plan_database
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.sqlite_snapshot import read
from tracehouse.parsers.kit.untrusted import decode_json, items, mapping, token

PROVIDER = "crush"
PER_PROJECT = True  # its roots are the settings' project roots
THINK = re.compile(r"<think>(.*?)(?:</think>|$)\s*", re.S)
PLACEHOLDER_TITLE = "New Session"
KNOWN_PARTS = {"text", "reasoning", "tool_call", "tool_result", "finish", "image_url", "binary"}
LAYOUT = Layout(PROVIDER, ("crush.db", ".crush/crush.db", "*/.crush/crush.db",
                           "*/*/.crush/crush.db"), per_project=True)  # fmt: skip
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots
plan_unit = plan_database


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    return [home]


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    sessions: dict[str, dict[str, Any]] = {}

    def stamps(conn: sqlite3.Connection) -> list[tuple[str, str]]:
        cursor = conn.execute("SELECT * FROM sessions ORDER BY created_at, id")
        names = [d[0] for d in cursor.description]
        sessions.update((str(r[0]), dict(zip(names, r, strict=True))) for r in cursor)
        per = {
            str(sid): [n, last]
            for sid, n, last in read(
                conn, "SELECT session_id, count(*), max(updated_at) FROM messages GROUP BY 1"
            )
        }
        return [(sid, orjson.dumps([row, per.get(sid)], default=str).decode())
                for sid, row in sessions.items()]  # fmt: skip

    def build(conn: sqlite3.Connection, sid: str, result: UnitResult) -> list[ImportItem]:
        return _session(conn, sessions[sid], unit, options, result)

    return parse_database(PROVIDER, unit, cursor, options, ("sessions", "messages"), stamps,
                          build)  # fmt: skip


def _session(conn: sqlite3.Connection, row: Mapping[str, Any], unit: Unit,
             options: ParseOptions, result: UnitResult) -> list[ImportItem]:  # fmt: skip
    sid = str(row["id"])
    talk = Conversation(PROVIDER, sid, unit.key, options.max_field)
    talk.seen(iso_seconds(row.get("created_at")))
    # Every column by name: a release's migrations add some (`provider`, `finished_at` came
    # later than the first databases), so none but the first three is assumed.
    names = [str(column[1]) for column in read(conn, "PRAGMA table_info(messages)")]
    sql = "SELECT * FROM messages WHERE session_id = ? ORDER BY created_at, rowid"
    for values in read(conn, sql, (sid,)):
        message = dict(zip(names, values, strict=True))
        mid, role, parts = message.get("id"), message.get("role"), message.get("parts")
        model, provider = message.get("model"), message.get("provider")
        created, finished = message.get("created_at"), message.get("finished_at")
        decoded, problem = decode_json(parts, list)
        try:
            if problem is not None:
                raise ValueError(f"parts are not a JSON list: {problem}")
            _message(talk, str(mid), str(role), decoded, model, provider,
                     iso_seconds(created), iso_seconds(finished))  # fmt: skip
            result.accounting[f"message.{role}"] += 1
        except SHAPE_ERRORS as exc:
            where = f"session {token(sid)} message {token(mid)}"
            result.rejects.append(Reject(PROVIDER, unit.key, where, shape_error(exc)))
            result.accounting["rejected"] += 1
    stamp = orjson.dumps(dict(row), default=str).decode()
    return built(talk, result, _fields(row, unit), stamp, options.now)


def _message(talk: Conversation, mid: str, role: str, parts: list[Any], model: Any,
             provider: Any, at: str | None, finished: str | None) -> None:  # fmt: skip
    for kind in {str(mapping(p).get("type")) for p in parts} - KNOWN_PARTS:
        talk.unknown(f"part.{kind}")
    texts = [str(mapping(p.get("data")).get("text") or "") for p in parts
             if mapping(p).get("type") == "text"]  # fmt: skip
    text = "\n\n".join(t for t in texts if t)
    if role == "user":
        talk.prompt(mid, text, at)
    elif role == "assistant":
        thinking = [str(mapping(p.get("data")).get("thinking") or "") for p in parts
                    if mapping(p).get("type") == "reasoning"]  # fmt: skip
        thinking += THINK.findall(text)  # local thinking models write it inline
        message_id = talk.reply(mid, THINK.sub("", text).strip(), at,
                                thinking="\n\n".join(t for t in thinking if t) or None,
                                model=model and str(model),
                                llm_provider=provider and str(provider))  # fmt: skip
        for part in items(parts):
            data = mapping(mapping(part).get("data"))
            if mapping(part).get("type") == "tool_call":
                arguments, bad = decode_json(data.get("input") or "{}", (dict, list))
                talk.call(str(data.get("id") or mid), str(data.get("name") or "tool"),
                          arguments if bad is None else data.get("input"), at,
                          message_id=message_id)  # fmt: skip
            elif mapping(part).get("type") == "finish":
                reason = data.get("reason")
                if reason in ("canceled", "error"):
                    talk.end_turn("aborted" if reason == "canceled" else "error")
        talk.end_turn(at=finished)
    elif role == "tool":
        for part in items(parts):
            data = mapping(mapping(part).get("data"))
            if mapping(part).get("type") == "tool_result":
                content = data.get("content")
                talk.result(str(data.get("tool_call_id")), content if isinstance(content, str)
                            else None, at, failed=data.get("is_error") is True)  # fmt: skip
    else:
        talk.notice(mid, text, at, {"notice": role})


def _fields(row: Mapping[str, Any], unit: Unit) -> dict[str, Any]:
    sid, parent = str(row["id"]), row.get("parent_session_id")
    title = row.get("title") if row.get("title") != PLACEHOLDER_TITLE else None
    project = unit.path.parent.parent if unit.path.parent.name == ".crush" else unit.path.parent
    return {
        "title": title,
        "workspace_path": str(project),
        "is_subagent": bool(parent),
        "parent_source_session_id": parent or None,
        "parent_session_id": ids.session_id(PROVIDER, str(parent)) if parent else None,
        "spawn_source_tool_call_id": sid if parent and not sid.startswith("title-") else None,
        "metadata": {"cost_usd": row.get("cost") or None,
                     "last_request_tokens": {"prompt": row.get("prompt_tokens"),
                                             "completion": row.get("completion_tokens")}},
    }  # fmt: skip
