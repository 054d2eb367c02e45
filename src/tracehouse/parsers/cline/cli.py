"""A Cline CLI 3 session's `<id>.messages.json` → ledger rows (README.md here has the mapping).

`~/.cline/data/sessions/<id>/`: `<id>.json` is the session's manifest (times, status, model,
work dir, title, version), `<id>.messages.json` its conversation, rewritten whole on every save:
`{sessionId, origin, messages: [{id, role, content: [parts], ts, modelInfo, metrics}]}`, the
parts Anthropic-shaped (`text`, `thinking`, `tool_use`, `tool_result`). A subagent the lead
spawned is `agent_<id>.messages.json` beside it, its `origin.parentThreadId` the lead.
`metrics.inputTokens` holds the cache reads (the AI SDK's total input), as seen with an
OpenAI-compatible provider.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import orjson

from tracehouse.model import ids
from tracehouse.model.fields import iso
from tracehouse.parsers.base import SHAPE_ERRORS, ParseOptions, Unit, shape_error
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.document import Read
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.untrusted import decode_json, items, mapping, not_json, place
from tracehouse.parsers.kit.usage import Usage

PROVIDER = "cline"
USAGE = Usage("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens",
              input_holds_cache=True)  # fmt: skip
# A prompt as the CLI hands it to the model: the mode it was typed in around it.
WRAPPED = re.compile(r'\A<user_input mode="([a-z]+)">(.*)</user_input>\Z', re.S)
SPAWN = "spawn_agent"
FINISHED = {"completed": "completed", "aborted": "aborted", "error": "failed"}


def build(unit: Unit, data: bytes, options: ParseOptions) -> Read:
    read = Read()
    document, problem = decode_json(data, dict)
    if problem is not None:
        read.incomplete = not_json(problem)
        read.problems.append((place(problem, "document"), f"not a session document: {problem}"))
        return read
    sid = str(document.get("sessionId") or unit.path.name.removesuffix(".messages.json"))
    talk = Conversation(PROVIDER, sid, unit.key, options.max_field)
    messages = items(document.get("messages"))
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            read.problems.append((f"[{index}]", "not an object"))
            continue
        try:
            for said in _message(talk, message, index):
                read.count(said)
        except SHAPE_ERRORS as exc:
            read.problems.append((f"[{index}]", shape_error(exc)))
    origin = mapping(document.get("origin"))
    parent = origin.get("parentThreadId")
    fields = (_subagent(unit, str(parent), messages) if isinstance(parent, str) and parent
              else _manifest(unit, sid))  # fmt: skip
    fields["metadata"] = {**fields.get("metadata", {}), "agent": document.get("agent")}
    fields.setdefault("tool_version", origin.get("version") and str(origin["version"]))
    read.sessions.append((talk, fields))
    return read


def _message(talk: Conversation, message: Mapping[str, Any], index: int) -> list[str]:
    role, at = str(message.get("role")), iso(message.get("ts"))
    key = str(message.get("id") or index)
    parts = [mapping(p) for p in items(message.get("content"))]
    if isinstance(message.get("content"), str):
        parts = [{"type": "text", "text": message["content"]}]
    if role == "user":
        done = []
        for part in parts:
            if part.get("type") == "tool_result":
                _result(talk, part, at)
                done.append("tool_result")
        text = "".join(str(p.get("text") or "") for p in parts if p.get("type") == "text")
        if text:
            wrapped = WRAPPED.match(text)
            mode = {"mode": wrapped.group(1)} if wrapped else None
            talk.prompt(key, wrapped.group(2) if wrapped else text, at, metadata=mode)
            done.append("user")
        return done or ["empty.user"]
    if role != "assistant":
        return [talk.unknown(f"message.{role}")]
    info = mapping(message.get("modelInfo"))
    model = str(info["id"]) if info.get("id") else None
    talk.note_model(model, info.get("provider") and str(info["provider"]), used=True)
    text = "\n\n".join(str(p["text"]) for p in parts if p.get("type") == "text" and p.get("text"))
    thinking = "\n\n".join(str(p.get("thinking") or "") for p in parts
                           if p.get("type") == "thinking") or None  # fmt: skip
    message_id = talk.reply(key, text, at, thinking=thinking, model=model)
    for n, part in enumerate(parts):
        if part.get("type") == "tool_use":
            talk.call(str(part.get("id") or f"{key}:{n}"), str(part.get("name") or "tool"),
                      part.get("input"), at, message_id=message_id)  # fmt: skip
    metrics = mapping(message.get("metrics"))
    if metrics:
        talk.usage(USAGE.counts(metrics))
    return ["assistant"]


def _result(talk: Conversation, part: Mapping[str, Any], at: str | None) -> None:
    """A call's result as the model was given it: a list of one outcome per command or file
    (`{query, result, error, success}`), or one text (JSON for some tools)."""
    content = part.get("content")
    outcomes = [mapping(o) for o in items(content)] if isinstance(content, list) else []
    if outcomes:
        text = "\n".join(str(o.get("result") or o.get("error") or "") for o in outcomes)
        failed = any(o.get("success") is False for o in outcomes)
    else:
        text = content if isinstance(content, str) else orjson.dumps(content).decode()
        failed = part.get("is_error") is True
    talk.result(str(part.get("tool_use_id")), text, at, failed=failed,
                name=str(part.get("name") or ""))  # fmt: skip


def _manifest(unit: Unit, sid: str) -> dict[str, Any]:
    """What the lead's manifest (`<id>.json` beside it) adds: work dir, title, version."""
    manifest = _sibling(os.path.join(os.path.dirname(unit.key), f"{sid}.json"))
    meta = mapping(manifest.get("metadata"))
    origin = mapping(meta.get("sessionHistoryOrigin"))
    return {
        "title": meta.get("title") if isinstance(meta.get("title"), str) else None,
        "workspace_path": manifest.get("cwd") if isinstance(manifest.get("cwd"), str) else None,
        "tool_version": origin.get("version") and str(origin["version"]),
        "metadata": {"status": manifest.get("status"), "exit_code": manifest.get("exit_code")},
    }


def _subagent(unit: Unit, parent: str, messages: list[Any]) -> dict[str, Any]:
    """A subagent's link: the lead's `spawn_agent` call whose task is the subagent's first
    prompt (the files name no call), and how that call ended."""
    lead = _sibling(os.path.join(os.path.dirname(unit.key), f"{parent}.messages.json"))
    asked = next((_text(m) for m in map(mapping, messages) if m.get("role") == "user"), "")
    call, status = None, None
    for message in map(mapping, items(lead.get("messages"))):
        for part in map(mapping, items(message.get("content"))):
            task = mapping(part.get("input")).get("task")
            if part.get("name") == SPAWN and part.get("type") == "tool_use" and task == asked:
                call = str(part.get("id"))
            elif part.get("type") == "tool_result" and call and part.get("tool_use_id") == call:
                ended = mapping(_json(part.get("content"))).get("finishReason")
                status = FINISHED.get(str(ended), "failed")
    cwd = _sibling(os.path.join(os.path.dirname(unit.key), f"{parent}.json")).get("cwd")
    return {
        "is_subagent": True,
        "workspace_path": cwd if isinstance(cwd, str) else None,
        "parent_source_session_id": parent,
        "parent_session_id": ids.session_id(PROVIDER, parent),
        "spawn_tool_call_id": ids.tool_call_id(PROVIDER, parent, call) if call else None,
        "spawn_source_tool_call_id": call,
        "task_description": asked or None,
        "task_status": status,
    }


def _sibling(path: str) -> Mapping[str, Any]:
    try:
        return mapping(orjson.loads(read_file(path)))
    except (OSError, orjson.JSONDecodeError):
        return {}


def _json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    found, problem = decode_json(value, dict)
    return found if problem is None else None


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(mapping(p).get("text") or "") for p in items(content)
                   if mapping(p).get("type") == "text")  # fmt: skip
