"""Warp's Agent Mode conversations (`warp.sqlite`) → ledger rows, as far as they can be read
with certainty (README.md here has the mapping, and what cannot be).

Warp is closed source; its database is migrated with Diesel. What it holds of a conversation:
`ai_queries`, one row per exchange with the model (`input` a JSON list: a typed prompt's
`{"Query": {text, context}}`, or `[]` for the agent's own continuation), `agent_conversations`
(the conversation's usage: tokens per model, credits, tool counts), `blocks` (every terminal
command; one the agent ran carries `ai_metadata` naming its conversation and the model's call
id). The model's answers and the calls other than commands are only in `agent_tasks.task`, a
protobuf blob with no published schema: not read.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracehouse.model.contract import ImportItem, Reject
from tracehouse.model.fields import iso_utc
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

PROVIDER = "warp"
LAYOUT = Layout(PROVIDER, ("warp.sqlite",))
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots
plan_unit = plan_database
ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Its state dir on Linux; macOS' group container."""
    state = Path(env["XDG_STATE_HOME"]) if env.get("XDG_STATE_HOME") else home / ".local" / "state"
    mac = (home / "Library" / "Group Containers" / "2BBY89MBSN.dev.warp" / "Library"
           / "Application Support")  # fmt: skip
    return [state / "warp-terminal", state / "warp-terminal-preview",
            mac / "dev.warp.Warp-Stable", mac / "dev.warp.Warp-Preview"]  # fmt: skip


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    def stamps(conn: sqlite3.Connection) -> list[tuple[str, str]]:
        asked = read(conn, "SELECT conversation_id, count(*), max(start_ts) FROM ai_queries"
                     " GROUP BY 1")  # fmt: skip
        spent = dict(read(conn, "SELECT conversation_id, last_modified_at FROM"
                          " agent_conversations"))  # fmt: skip
        ran = {str(r[0]): r[1] for r in read(conn, "SELECT json_extract(ai_metadata,"
               " '$.conversation_id'), count(*) FROM blocks WHERE ai_metadata IS NOT NULL"
               " GROUP BY 1")}  # fmt: skip
        return [(str(c), orjson.dumps([n, last, spent.get(c), ran.get(str(c))]).decode())
                for c, n, last in asked if c]  # fmt: skip

    def build(conn: sqlite3.Connection, sid: str, result: UnitResult) -> list[ImportItem]:
        try:
            return _conversation(conn, sid, unit, options, result)
        except SHAPE_ERRORS as exc:
            result.rejects.append(
                Reject(PROVIDER, unit.key, f"session {token(sid)}", shape_error(exc))
            )
            result.accounting["rejected"] += 1
            return []

    return parse_database(PROVIDER, unit, cursor, options, ("ai_queries",), stamps, build)


def _conversation(conn: sqlite3.Connection, sid: str, unit: Unit, options: ParseOptions,
                  result: UnitResult) -> list[ImportItem]:  # fmt: skip
    talk = Conversation(PROVIDER, sid, unit.key, options.max_field)
    columns = {str(c[1]) for c in read(conn, "PRAGMA table_info(ai_queries)")}
    model = "model_id" if "model_id" in columns else "NULL"  # the 2024 schema has none
    events: list[tuple[str, str, list[Any]]] = [
        (str(at), "ask", row) for at, *row in read(conn, f"SELECT start_ts, exchange_id, input,"
        f" working_directory, {model} FROM ai_queries WHERE conversation_id = ?", (sid,))
    ]  # fmt: skip
    events += [(str(at), "run", row) for at, *row in read(
        conn, "SELECT start_ts, block_id, id, stylized_command, stylized_output, exit_code,"
        " completed_ts, json_extract(ai_metadata, '$.requested_command_action_id') FROM blocks"
        " WHERE json_extract(ai_metadata, '$.conversation_id') = ?", (sid,))]  # fmt: skip
    cwd = None
    for at, kind, row in sorted(events, key=lambda e: e[0]):
        if kind == "ask":
            exchange, given, directory, model_id = row
            cwd = cwd or directory
            asked, problem = decode_json(given, list)
            if problem is not None:
                raise ValueError(f"exchange {exchange}: input is not a JSON list: {problem}")
            for given_item in map(mapping, items(asked)):
                tag = next(iter(given_item), "")
                query = mapping(given_item.get("Query"))
                if isinstance(query.get("text"), str):
                    talk.prompt(str(exchange), query["text"], iso_utc(at))
                elif tag != "Query":
                    talk.unknown(f"input.{tag}")
            # the model of this exchange's turn: the one its prompt opened, or the open one
            talk.note_model(model_id and str(model_id), used=True)
            result.accounting["exchange" if asked else "continuation"] += 1
        else:
            block, rowid, command, output, code, done, call = row
            talk.call(str(call or block or rowid), "run_command", {"command": _plain(command)},
                      iso_utc(at))  # fmt: skip
            ended = {"exit_code": code} if isinstance(code, int) else None
            talk.result(str(call or block or rowid), _plain(output), iso_utc(done),
                        failed=isinstance(code, int) and code != 0, metadata=ended)  # fmt: skip
            result.accounting["command"] += 1
    usage = _usage(conn, sid)
    fields = {"workspace_path": cwd, "entrypoint": "terminal",
              "metadata": {"usage": usage} if usage else None}  # fmt: skip
    stamp = orjson.dumps([len(events), usage]).decode()
    return built(talk, result, fields, stamp, options.now)


def _usage(conn: sqlite3.Connection, sid: str) -> Mapping[str, Any] | None:
    """What Warp says the conversation spent: tokens per model (one total, no input/output
    split) and credits, its billing unit."""
    found = read(conn, "SELECT conversation_data FROM agent_conversations WHERE"
                 " conversation_id = ?", (sid,))  # fmt: skip
    data, _ = decode_json(found[0][0], dict) if found else ({}, None)
    usage = mapping(mapping(data).get("conversation_usage_metadata"))
    kept = {k: usage.get(k) for k in ("credits_spent", "token_usage", "was_summarized")
            if k in usage}  # fmt: skip
    return kept or None


def _plain(value: Any) -> str | None:
    """A block's ANSI-coloured bytes as text (its terminal's line ends as `\n`)."""
    if value is None:
        return None
    raw = value if isinstance(value, bytes) else str(value).encode()
    text = ANSI.sub(b"", raw).decode("utf-8", "replace").replace("\r\n", "\n")
    return text.replace("\r", "").strip("\n") or None
