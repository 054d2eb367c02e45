"""A Kimi CLI session file → ledger rows (README.md here has the mapping, record by record).

The wire log (`wire.jsonl`): a `metadata` line, then `{timestamp (epoch seconds), message:
{type, payload}}`. `TurnBegin` is a prompt; the `ContentPart`s of a step are one reply (parts
of one kind that follow each other are pieces of one text); `ToolCall` and `ToolResult` pair by
id; `StatusUpdate.token_usage` is one model call's usage, its `input_other` leaving the cache
reads and writes out. The context (`context.jsonl`, and a subagent's `context_sub_<n>.jsonl`):
OpenAI-style `user`/`assistant`/`tool` records with no times and no usage (`_usage` is the
context's size, kept in metadata).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import orjson

from tracehouse.model import ids
from tracehouse.model.fields import iso_seconds
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.kimi_cli.layout import PROVIDER
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.jsonl_session import JsonlSession, jsonl_parser, text_of
from tracehouse.parsers.kit.untrusted import items, mapping
from tracehouse.parsers.kit.usage import Usage

# What Kimi asks a subagent whose answer was under 200 characters (`subagents/runner.py`
# SUMMARY_CONTINUATION_PROMPT): the host's words, not a task.
CONTINUATION = "Your previous response was too brief."
SAFE = re.compile(r"[A-Za-z0-9_-]{1,64}")  # an agent id, as a folder name
# a subagent's `meta.json` status: `idle` is a foreground run that answered (ready to resume)
TASK_STATUS = {"idle": "completed", "completed": "completed", "failed": "failed",
               "killed": "aborted"}  # fmt: skip
# `input_other` leaves the cache reads and writes out.
USAGE = Usage("input_other", "output", "input_cache_read", "input_cache_creation",
              input_holds_cache=False)  # fmt: skip


class KimiSession(JsonlSession):
    PROVIDER = PROVIDER

    def fields(self) -> dict[str, Any]:
        info = self.unit.info
        parent = info.get("parent")
        return {
            "title": None if parent else _state_title(info["beside"][0]),
            "workspace_path": info.get("workspace"),
            "is_subagent": parent is not None,
            "parent_source_session_id": parent,
            "parent_session_id": None if parent is None else ids.session_id(PROVIDER, parent),
            "metadata": {key: self.kept.get(key) for key in ("protocol_version", "context_tokens")},
            **(_task(info["beside"][0]) if parent else {}),
        }


def _task(path: str) -> dict[str, Any]:
    """A subagent's task and how it ended, from the `meta.json` beside its log (later releases)."""
    try:
        meta = mapping(orjson.loads(read_file(path)))
    except (OSError, orjson.JSONDecodeError):
        return {}
    described = meta.get("description")
    return {"task_description": described if isinstance(described, str) else None,
            "task_status": TASK_STATUS.get(str(meta.get("status")))}  # fmt: skip


class WireSession(KimiSession):
    def feed(self, record: dict[str, Any], offset: int) -> str:
        if record.get("type") == "metadata":
            self.kept["protocol_version"] = record.get("protocol_version")
            return "metadata"
        at = iso_seconds(record.get("timestamp"))
        message = mapping(record.get("message"))
        kind, payload = str(message.get("type")), mapping(message.get("payload"))
        key = str(offset)
        if kind == "TurnBegin":
            self.kept.pop("step", None)
            asked = text_of(payload.get("user_input"))
            if self.unit.info.get("parent") and asked.startswith(CONTINUATION):
                self.talk.notice(key, asked, at, {"notice": "summary_continuation"})
            else:
                self.talk.prompt(key, asked, at)
        elif kind == "StepBegin":
            self.kept.pop("step", None)
        elif kind == "ContentPart":
            self._content(key, payload, at)
        elif kind == "ToolCall":
            function = mapping(payload.get("function"))
            call = str(payload.get("id") or key)
            self.kept["call"] = [call, str(function.get("name") or "tool"),
                                 str(function.get("arguments") or "")]  # fmt: skip
            step = self.kept.get("step")
            self.talk.call(
                call,
                self.kept["call"][1],
                _arguments(self.kept["call"][2]),
                at,
                message_id=self.talk.message_id(step["key"]) if step else None,
            )
        elif kind == "ToolCallPart" and self.kept.get("call"):
            call, name, arguments = self.kept["call"]
            self.kept["call"][2] = arguments = arguments + str(payload.get("arguments_part") or "")
            self.talk.call(call, name, _arguments(arguments), at)
        elif kind == "ToolResult":
            value = mapping(payload.get("return_value"))
            output = value.get("output") or value.get("message")
            self.talk.result(str(payload.get("tool_call_id")), text_of(output), at,
                             failed=value.get("is_error") is True)  # fmt: skip
        elif kind == "StatusUpdate":
            usage = mapping(payload.get("token_usage"))
            if usage:
                self.talk.usage(USAGE.counts(usage))
        elif kind == "SubagentEvent":
            self._subagent(payload)
            return "quiet.SubagentEvent"  # the subagent's own wire log holds the same events
        elif kind == "TurnEnd":
            self.talk.end_turn(at=at)
        elif kind == "StepInterrupted":
            self.talk.end_turn("aborted", at)
        else:
            return self.talk.unknown(f"{kind}")
        return kind

    def _subagent(self, event: Mapping[str, Any]) -> None:
        """The call that launched a subagent, linked to the subagent's session where it has a
        folder of its own (`subagents/<agent id>/`)."""
        agent, call = event.get("agent_id"), event.get("parent_tool_call_id")
        if not (isinstance(agent, str) and isinstance(call, str)) or not SAFE.fullmatch(agent):
            return
        if os.path.isdir(os.path.join(os.path.dirname(self.unit.key), "subagents", agent)):
            self.talk.spawned(call, f"{self.talk.sid}/{agent}")

    def _content(self, key: str, part: Mapping[str, Any], at: str | None) -> None:
        step = self.kept.setdefault("step", {"key": key, "text": "", "think": "", "at": at})
        if part.get("type") == "think":
            step["think"] += str(part.get("think") or "")
        else:
            step["text"] += str(part.get("text") or "")
        self.talk.reply(step["key"], step["text"], step["at"], thinking=step["think"] or None)


class ContextSession(KimiSession):
    def feed(self, record: dict[str, Any], offset: int) -> str:
        role, key = str(record.get("role")), str(offset)
        content = record.get("content")
        if role == "user":
            self.talk.prompt(key, text_of(content), None)
        elif role == "assistant":
            message_id = self.talk.reply(
                key, text_of(content), None, thinking=text_of(content, ("think",), "think") or None
            )
            for call in items(record.get("tool_calls")):
                function = mapping(mapping(call).get("function"))
                self.talk.call(
                    str(call.get("id") or key),
                    str(function.get("name") or "tool"),
                    _arguments(function.get("arguments")),
                    None,
                    message_id=message_id,
                )
        elif role == "tool":
            self.talk.result(str(record.get("tool_call_id") or key), text_of(content), None)
        elif role == "_usage":
            self.kept["context_tokens"] = record.get("token_count")
        elif role in ("_system_prompt", "_checkpoint"):  # the prompt, rewind points
            return f"quiet.{role}"
        else:
            return self.talk.unknown(f"{role}")
        return role


def _arguments(text: Any) -> Any:
    """A call's arguments: the JSON they are, or the text as written (a call cut short)."""
    if not isinstance(text, str) or not text:
        return text or None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _state_title(path: str) -> str | None:
    """The title a later release keeps in the session's `state.json`, if any."""
    try:
        state = orjson.loads(read_file(path))
    except (OSError, orjson.JSONDecodeError):
        return None
    title = mapping(state).get("title")
    return title if isinstance(title, str) and title.strip() else None


_wire, _context = jsonl_parser(WireSession), jsonl_parser(ContextSession)


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    return (_wire if unit.info.get("form") == "wire" else _context)(unit, cursor, options)
