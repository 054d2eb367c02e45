"""A Continue session's `<sessionId>.json` → ledger rows (README.md here has the mapping).

`~/.continue/sessions/<id>.json` is one chat, rewritten whole on every save: `{sessionId,
title, workspaceDirectory, history: [{message, contextItems, toolCallStates?, promptLogs?}],
mode?, chatModelTitle?}`. A `message` is `user`, `assistant` (its `toolCalls` OpenAI-shaped),
`thinking` (the reasoning before the next answer) or `tool` (a call's output, by `toolCallId`).
No message has a time: the session's start is its `dateCreated` in `sessions/sessions.json`,
the index beside it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from tracehouse.model.fields import iso
from tracehouse.parsers.base import SHAPE_ERRORS, ParseOptions, Unit, UnitResult, shape_error
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.document import Read, parse_document
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.untrusted import decode_json, items, mapping, not_json, place

PROVIDER = "continue"
INDEX = "sessions.json"
# A reasoning model's thoughts inside the answer (2025, through Ollama), before what it says.
THINK = re.compile(r"\A\s*<think>(.*?)</think>\s*", re.S)
# `toolCallStates[].status`: a call the person stopped or that broke gave the model no output.
FAILED = ("errored", "canceled")


def _unit_info(top: str, parts: list[str]) -> Mapping[str, Any] | None:
    return None if parts[-1] == INDEX else {}


LAYOUT = Layout(PROVIDER, ("sessions/*.json",), info=_unit_info)
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    """`~/.continue`, or where `CONTINUE_GLOBAL_DIR` moves it."""
    given = env.get("CONTINUE_GLOBAL_DIR")
    return [Path(given).expanduser()] if given else [home / ".continue"]


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    return parse_document(PROVIDER, unit, cursor, options, build)


def build(unit: Unit, data: bytes, options: ParseOptions) -> Read:
    read = Read()
    document, problem = decode_json(data, dict)
    if problem is not None:
        read.incomplete = not_json(problem)
        read.problems.append((place(problem, "document"), f"not a session document: {problem}"))
        return read
    sid = str(document.get("sessionId") or unit.path.stem)
    listed = _listed(unit, sid)
    talk = Conversation(PROVIDER, sid, unit.key, options.max_field)
    talk.seen(iso(_epoch_ms(listed.get("dateCreated"))))
    chat = _Chat(talk)
    for index, entry in enumerate(items(document.get("history"))):
        if not isinstance(entry, dict):
            read.problems.append((f"history[{index}]", "not an object"))
            continue
        try:
            read.count(chat.entry(entry, index))
        except SHAPE_ERRORS as exc:
            read.problems.append((f"history[{index}]", shape_error(exc)))
    chat.close()
    # an early auto-title is the first words of the answer, thoughts and all: no title
    titles = (document.get("title"), listed.get("title"))
    title = next((t for t in titles if isinstance(t, str) and t.strip()
                  and not t.startswith("<think>")), None)  # fmt: skip
    workspace = document.get("workspaceDirectory") or listed.get("workspaceDirectory")
    read.sessions.append((talk, {
        "title": title,
        "workspace_path": _path(workspace) if isinstance(workspace, str) else None,
        "entrypoint": "ide",
        "metadata": {"mode": document.get("mode"), "model_title": document.get("chatModelTitle"),
                     "message_count": listed.get("messageCount")},
    }))  # fmt: skip
    return read


class _Chat:
    """The history's items in order: a `thinking` item waits for the answer it comes before,
    a call's state (from its answer's `toolCallStates`) for its output."""

    def __init__(self, talk: Conversation) -> None:
        self.talk = talk
        self.thinking: list[str] = []
        self.states: dict[str, str] = {}

    def entry(self, entry: Mapping[str, Any], index: int) -> str:
        message = mapping(entry.get("message"))
        role = str(message.get("role"))
        key = str(message.get("id") or index)
        text = _text(message.get("content"))
        if role == "user":
            context = len(items(entry.get("contextItems")))  # files and the like, attached
            self.talk.prompt(key, text, None, metadata={"context_items": context} if context
                             else None)  # fmt: skip
        elif role == "thinking":
            if text.strip():
                self.thinking.append(text)
        elif role == "assistant":
            self._answer(entry, message, key, text)
        elif role == "tool":
            call = str(message.get("toolCallId"))
            state = self.states.pop(call, "done")
            self.talk.result(call, text, None, failed=state in FAILED,
                             metadata={"status": state} if state != "done" else None)  # fmt: skip
        else:
            return self.talk.unknown(f"message.{role}")
        return role

    def _answer(self, entry: Mapping[str, Any], message: Mapping[str, Any], key: str,
                text: str) -> None:  # fmt: skip
        logs = [mapping(p) for p in items(entry.get("promptLogs"))]
        log = logs[-1] if logs else {}
        model = mapping(log.get("completionOptions")).get("model") or log.get("modelTitle")
        provider = log.get("modelProvider")
        thought = THINK.match(text)
        if thought:
            self.thinking.append(thought.group(1).strip())
            text = text[thought.end() :]
        calls = [mapping(c) for c in items(message.get("toolCalls"))]
        if not text.strip() and not calls and not self.thinking:
            return  # an answer begun and left empty (the agent's first step)
        thinking = "\n\n".join(t for t in self.thinking if t) or None
        self.thinking = []
        said = self.talk.reply(key, text, None, thinking=thinking,
                               model=str(model) if model else None,
                               llm_provider=str(provider) if provider else None)  # fmt: skip
        for n, call in enumerate(calls):
            function = mapping(call.get("function"))
            arguments = function.get("arguments")
            params, problem = decode_json(arguments, dict) if isinstance(arguments, str) else (
                arguments, None)  # fmt: skip
            self.talk.call(str(call.get("id") or f"{key}:{n}"), str(function.get("name") or ""),
                           arguments if problem is not None else params, None,
                           message_id=said)  # fmt: skip
        for state in map(mapping, items(entry.get("toolCallStates"))):
            if state.get("toolCallId") and state.get("status"):
                self.states[str(state["toolCallId"])] = str(state["status"])

    def close(self) -> None:
        """A call stopped or broken before it gave output has no `tool` item: it failed."""
        for call, state in self.states.items():
            if state in FAILED:
                self.talk.result(call, None, None, failed=True, metadata={"status": state})


def _text(content: Any) -> str:
    """A string (2025's answers), or parts of which the text ones are read."""
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text") or "") for p in map(mapping, items(content))
                   if p.get("type") == "text")  # fmt: skip


def _listed(unit: Unit, sid: str) -> Mapping[str, Any]:
    """The session's entry in the index beside it (a session's file can outlive it)."""
    try:
        index = orjson.loads(read_file(os.path.join(os.path.dirname(unit.key), INDEX)))
    except (OSError, orjson.JSONDecodeError):
        return {}
    return next((e for e in map(mapping, items(index)) if e.get("sessionId") == sid), {})


def _epoch_ms(value: Any) -> int | None:
    """`dateCreated`: epoch milliseconds, written as a string."""
    text = str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""
    return int(text) if text.isdigit() else None


def _path(workspace: str) -> str:
    """A plain path (Continue 1.0) or a `file://` URI (later: `file:///c%3A/www/app` on
    Windows) → the path."""
    if not workspace.startswith("file://"):
        return workspace
    path = unquote(urlsplit(workspace).path)
    return path[1:] if re.match(r"/[A-Za-z]:", path) else path
