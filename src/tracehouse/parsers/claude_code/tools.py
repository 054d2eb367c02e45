"""Tool calls: a `tool_use` block opens one; the matching `tool_result` completes it."""

from __future__ import annotations

import re
from typing import Any

import orjson

from tracehouse.model import ids
from tracehouse.parsers.claude_code import records as rec

PROVIDER = "claude-code"

_EXIT = re.compile(r"Exit code (-?\d+)\b")


def subagent_source_id(project: str, agent_id: str) -> str:
    """A subagent's id as both sides can derive it: the parent's Task result names only the
    agentId, and the v2.0 layout keeps agent files beside every session of the project, so the
    agent id (random hex) is scoped by the project directory rather than by a parent session."""
    return f"{project}/agent-{agent_id}"


def new_call(
    block: dict[str, Any], message: dict[str, Any], sid: str, seq: int, ts: str | None
) -> dict[str, Any]:
    tool_use_id = str(block.get("id") or f"{message['source_message_id']}#{seq}")
    return {
        "tool_call_id": ids.tool_call_id(PROVIDER, sid, tool_use_id),
        "session_id": message["session_id"],
        "turn_id": message["turn_id"],
        "message_id": message["message_id"],
        "source_tool_call_id": tool_use_id,
        "seq": seq,
        "tool_name": str(block.get("name") or "?"),
        "params": block.get("input"),
        "result": None,
        "status": "pending",
        "error": None,
        "spawned_session_id": None,
        "started_at": ts,
        "completed_at": None,
    }


def complete(
    call: dict[str, Any],
    block: dict[str, Any],
    record: dict[str, Any],
    ts: str | None,
    project: str,
    max_field: int,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The call with its result, status and error, and the sources the result cites."""
    call = dict(call)
    text = rec.content_text(block.get("content"))
    denied = record.get("toolDenialKind")
    failed = bool(block.get("is_error")) or bool(denied)
    call["result"] = rec.cap(text, max_field)
    call["status"] = "failed" if failed else "completed"
    call["error"] = rec.cap(text, 2000) if failed else None
    if denied:
        call["error"] = f"denied ({denied}): {call['error']}"
    call["completed_at"] = ts
    code = _EXIT.match(text or "") if failed else None
    if code is not None:  # Claude Code writes a failed command's status only into its text
        call["metadata"] = {**(call.get("metadata") or {}), "exit_code": int(code.group(1))}
    result = record.get("toolUseResult")
    if isinstance(result, dict) and isinstance(result.get("agentId"), str):
        child = subagent_source_id(project, result["agentId"])
        call["spawned_session_id"] = ids.session_id(PROVIDER, child)
        call["spawned_source_session_id"] = child
    params = call.get("params")
    params = orjson.loads(params) if isinstance(params, str) else params
    sources = rec.web_sources(call["tool_name"], result)
    file = rec.file_source(call["tool_name"], params, result)
    if file:
        sources.append(file)
    return call, sources
