"""Zed's agent threads (`threads/threads.db` in its data dir) → ledger rows (README.md here has
the mapping).

One row per thread: `threads(id, summary, updated_at, data_type, data, parent_id, folder_paths,
created_at)`, `data` the thread as JSON, zstd-compressed where `data_type` says `zstd`. The
JSON (version 0.3.0): `messages` tagged `User` (`id`, `content` of `Text` and `Mention` parts)
or `Agent` (`content` of `Text`, `Thinking` and `ToolUse` parts, and the `tool_results` of its
calls), `model {provider, model}`, `request_token_usage` by user message, the project's
worktrees and git state when the thread began. No message has a time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracehouse.model import ids
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
from tracehouse.parsers.kit.untrusted import items, mapping, token

PROVIDER = "zed"
LAYOUT = Layout(PROVIDER, ("threads/threads.db",))
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots
plan_unit = plan_database
VERSIONS = ("0.3.",)  # the thread JSON read; 0.2.0 (`role`/`segments`) was not seen
MAX_THREAD = 256 * 2**20  # a thread's JSON, decompressed: past this it is refused, not read


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Zed's data dir on Linux (`$XDG_DATA_HOME/zed`), macOS and Windows."""
    data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    local = Path(env["LOCALAPPDATA"]) if env.get("LOCALAPPDATA") else home / "AppData" / "Local"
    return [data / "zed", home / "Library" / "Application Support" / "Zed", local / "Zed"]


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    def stamps(conn: sqlite3.Connection) -> list[tuple[str, str]]:
        sql = "SELECT id, updated_at, data_type, length(data) FROM threads ORDER BY created_at, id"
        return [(str(r[0]), orjson.dumps(r[1:], default=str).decode()) for r in read(conn, sql)]

    def build(conn: sqlite3.Connection, sid: str, result: UnitResult) -> list[ImportItem]:
        names = [str(c[1]) for c in read(conn, "PRAGMA table_info(threads)")]
        (values,) = read(conn, "SELECT * FROM threads WHERE id = ?", (sid,))
        try:
            return _thread(dict(zip(names, values, strict=True)), unit, options, result)
        except SHAPE_ERRORS as exc:
            result.rejects.append(
                Reject(PROVIDER, unit.key, f"session {token(sid)}", shape_error(exc))
            )
            result.accounting["rejected"] += 1
            return []

    return parse_database(PROVIDER, unit, cursor, options, ("threads",), stamps, build)


def _decoded(row: Mapping[str, Any]) -> dict[str, Any]:
    data, kind = row.get("data"), row.get("data_type")
    if not isinstance(data, bytes | str):
        raise ValueError(f"data is {type(data).__name__}, not a thread")
    if kind == "zstd":
        import zstandard  # only a Zed ledger pays for it

        raw = data.encode() if isinstance(data, str) else data
        try:
            with zstandard.ZstdDecompressor().stream_reader(raw) as reader:
                data = reader.read(MAX_THREAD + 1)
        except zstandard.ZstdError as exc:
            raise ValueError(f"not zstd data: {exc}") from None
        if len(data) > MAX_THREAD:
            raise ValueError(f"the thread is over {MAX_THREAD:,} bytes decompressed")
    elif kind != "json":
        raise ValueError(f"data_type {kind!r}: neither zstd nor json")
    thread = orjson.loads(data)
    if not isinstance(thread, dict):
        raise ValueError("the thread is not a JSON object")
    version = str(thread.get("version"))
    if not version.startswith(VERSIONS):
        raise ValueError(f"thread version {version!r}: only {', '.join(VERSIONS)}x is known")
    return thread


def _thread(row: Mapping[str, Any], unit: Unit, options: ParseOptions,
            result: UnitResult) -> list[ImportItem]:  # fmt: skip
    sid = str(row["id"])
    thread = _decoded(row)
    talk = Conversation(PROVIDER, sid, unit.key, options.max_field)
    talk.seen(iso_utc(row.get("created_at")))
    model = mapping(thread.get("model"))
    talk.note_model(model.get("model") and str(model["model"]),
                    model.get("provider") and str(model["provider"]))  # fmt: skip
    spent = mapping(thread.get("request_token_usage"))
    for index, message in enumerate(items(thread.get("messages"))):
        tag, body = next(iter(mapping(message).items()), ("", None))
        body = mapping(body)
        key = str(body.get("id") or index)
        if tag == "User":
            mentions = sum("Mention" in mapping(p) for p in items(body.get("content")))
            # the usage of the last request that answered it, not what the turn spent
            meta = {"mentions": mentions or None, "last_request_tokens": spent.get(key)}
            talk.prompt(key, _texts(body, "Text"), None,
                        metadata={k: v for k, v in meta.items() if v} or None)  # fmt: skip
        elif tag == "Agent":
            _answer(talk, body, f"agent-{index}")
        else:
            talk.unknown(f"message.{tag}")
        result.accounting[f"message.{tag}"] += 1
    talk.seen(iso_utc(row.get("updated_at")))
    stamp = orjson.dumps([row.get("updated_at"), len(row.get("data") or b"")]).decode()
    return built(talk, result, _fields(row, thread), stamp, options.now)


def _answer(talk: Conversation, body: Mapping[str, Any], key: str) -> None:
    parts = [mapping(p) for p in items(body.get("content"))]
    thinking = "\n\n".join(str(mapping(p["Thinking"]).get("text") or "") for p in parts
                           if "Thinking" in p) or None  # fmt: skip
    said = talk.reply(key, _texts(body, "Text"), None, thinking=thinking)
    results = mapping(body.get("tool_results"))
    for n, part in enumerate(p for p in parts if "ToolUse" in p):
        use = mapping(part["ToolUse"])
        call = str(use.get("id") or f"{key}:{n}")
        talk.call(call, str(use.get("name") or "tool"), use.get("input"), None, message_id=said)
        outcome = mapping(results.get(call))
        if outcome:
            output = outcome.get("output")
            text = output if isinstance(output, str) else _texts(outcome, "Text", "content")
            talk.result(call, text, None, failed=outcome.get("is_error") is True)


def _texts(body: Mapping[str, Any], tag: str, field: str = "content") -> str:
    value = body.get(field)
    parts = [value] if isinstance(value, dict) else items(value)
    return "\n\n".join(str(mapping(p)[tag]) for p in parts
                       if isinstance(mapping(p).get(tag), str))  # fmt: skip


def _fields(row: Mapping[str, Any], thread: Mapping[str, Any]) -> dict[str, Any]:
    snapshot = mapping(thread.get("initial_project_snapshot"))
    worktree = mapping(next(iter(items(snapshot.get("worktree_snapshots"))), None))
    git = mapping(worktree.get("git_state"))
    folders = row.get("folder_paths")
    parent = row.get("parent_id")
    title = row.get("summary") or thread.get("title")
    first = folders.splitlines()[0] if isinstance(folders, str) and folders else None
    return {
        "title": title if isinstance(title, str) else None,
        "workspace_path": first or worktree.get("worktree_path"),
        "git_branch": git.get("current_branch"),
        "git_commit": git.get("head_sha"),
        "git_remote": git.get("remote_url"),
        "entrypoint": "ide",
        "is_subagent": bool(parent),
        "parent_source_session_id": parent or None,
        "parent_session_id": ids.session_id(PROVIDER, str(parent)) if parent else None,
        "metadata": {
            "profile": thread.get("profile"),
            "version": thread.get("version"),
            "completion_mode": thread.get("completion_mode"),
            "cumulative_tokens": thread.get("cumulative_token_usage") or None,
        },
    }
