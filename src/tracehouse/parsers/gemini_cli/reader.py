"""A Gemini CLI chat file → one session on the parser kit (README.md here has the mapping).

Both forms are read whole whenever the file changes (`kit.document`): a later line of a
`.jsonl` chat may replace an earlier message, patch the metadata or cut the conversation back
(`records.py`). Each `user` message opens a turn; the `gemini` replies after it join it, their
thoughts their thinking, their tool calls the turn's calls; `info`, `warning` and `error` are
the CLI's own notices. Tokens are per reply, not cumulative.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import orjson

from tracehouse.model import fields, ids
from tracehouse.model.tokens import ledger_counts
from tracehouse.parsers.base import SHAPE_ERRORS, ParseOptions, Unit, UnitResult, shape_error
from tracehouse.parsers.gemini_cli import replies
from tracehouse.parsers.gemini_cli.discover import PROVIDER
from tracehouse.parsers.gemini_cli.records import Chat, load_document, load_lines
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.document import Read, parse_document
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.prompt_log import parse_prompt_log
from tracehouse.parsers.kit.untrusted import items, token

MAIN_FILE = re.compile(r"^session-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2})-(.+)\.jsonl?$")
TOOL_STATUS = {"success": "completed", "error": "failed", "cancelled": "failed",
               "scheduled": "pending", "validating": "pending", "awaiting_approval": "pending",
               "executing": "running"}  # fmt: skip
CONTEXT_OPENING = "<session_context>"
TOKEN_KEYS = ("input", "output", "cached", "thoughts", "tool")  # Gemini's TokensSummary


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    if unit.info.get("logs"):
        heads = _recorded(unit.root)
        unit = replace(unit, info={**unit.info, "workspace": _workspace(unit)})
        return parse_prompt_log(PROVIDER, unit, cursor, options, lambda s: s[:8] in heads)
    return parse_document(PROVIDER, unit, cursor, options, _build)


class _Talk(Conversation):
    """A chat's conversation, with what its session row needs beside the kit's."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args, turn_model="first")
        self.llm_provider = "google"
        self.times: list[str] = []  # when its messages were written
        self.agents: set[str] = set()  # the subagents it ran, by name

    def has_content(self) -> bool:  # the CLI's notices alone are a session too
        return self.counts["messages"] > 0


def _build(unit: Unit, data: bytes, options: ParseOptions) -> Read:
    jsonl = unit.key.endswith(".jsonl")
    chat = load_lines(data) if jsonl else load_document(data)
    read = Read(problems=chat.problems, incomplete=chat.incomplete,
                accounting=dict(chat.accounting))  # fmt: skip
    if chat.incomplete and jsonl:  # refused once quiet: the CLI will not finish it
        last = data.count(b"\n") + 1
        read.problems.append((f"line {last}", "the file ends in the middle of a record"))
    sid = chat.meta.get("sessionId")
    if chat.messages and not (isinstance(sid, str) and sid):
        read.problems.append(("document" if not jsonl else "line 1", "no sessionId"))
        return read
    talk = _Talk(PROVIDER, source_id(unit, chat.meta), unit.key, options.max_field)
    for index, message in enumerate(chat.messages):
        try:
            _message(talk, message)
        except SHAPE_ERRORS as exc:  # this message is a reject; the conversation goes on
            read.problems.append((f"message {token(message.get('id') or index)}", shape_error(exc)))
    read.sessions.append((talk, _session(unit, chat, talk, "jsonl" if jsonl else "json")))
    return read


def _message(talk: _Talk, message: dict[str, Any]) -> None:
    mid, kind = str(message["id"]), str(message["type"])
    at = _time(message.get("timestamp"))
    content = message.get("content")
    if kind == "user" and replies.answers_only(content):
        return _answered(talk, content)  # a tool's answer sent back: its call holds it
    if at:
        talk.times.append(at)
    text = replies.content_text(content)
    if kind == "user" and text.lstrip().startswith(CONTEXT_OPENING):  # not a prompt
        return talk.context(mid, text, at, {"context": "session_context"})
    display = message.get("displayContent")
    shown = replies.content_text(display) if display is not None else text
    metadata = {"display_content": shown} if shown != text else {}
    model = message.get("model") if isinstance(message.get("model"), str) else None
    if kind == "user":
        message_id = talk.prompt(mid, text, at, metadata=metadata, own_turn=True)
    elif kind == "gemini":
        thinking = replies.thoughts(message.get("thoughts")) or replies.thought_parts(content)
        message_id = talk.reply(mid, text, at, thinking=thinking, model=model, metadata=metadata)
    else:  # info, warning, error (or a type of a later version)
        message_id = talk.notice(mid, text, at, {"notice": kind, **metadata})
        if kind == "error":
            talk.end_turn("error")
    tokens = message.get("tokens")
    if isinstance(tokens, dict):
        counted = {k: fields.count(tokens.get(k), f"tokens.{k}") for k in TOKEN_KEYS}
        talk.usage(token_columns(counted))
    for call in items(message.get("toolCalls")) or replies.function_calls(content, at):
        _call(talk, call, message_id, at)


def _call(talk: _Talk, call: dict[str, Any], message_id: str, at: str | None) -> None:
    key = str(call["id"])
    status = TOOL_STATUS.get(str(call.get("status")), "running")
    output, error = replies.function_response(call.get("result"))
    agent = call.get("agentId") if isinstance(call.get("agentId"), str) else None
    display = call.get("resultDisplay")
    progress = isinstance(display, dict) and display.get("isSubagentProgress")
    name = display.get("agentName") if isinstance(display, dict) and progress else None
    if isinstance(name, str):
        talk.agents.add(name)
    started = _time(call.get("timestamp")) or at
    row = talk.call(key, str(call.get("name") or "tool"), None, started, message_id=message_id)
    row["params"] = call.get("args") if call.get("args") not in (None, "") else None
    # A call read from a `functionCall` part (a snapshot's replies have no `toolCalls`) is
    # answered by the next user message's `functionResponse` part (`_answered`).
    talk.settle(key, status, result=_first(output, error, display), error=error or None,
                at=started if status in ("completed", "failed") else None, child=agent,
                final=status != "running" or call.get("result") is not None)  # fmt: skip


def _answered(talk: _Talk, content: Any) -> None:
    """Results of calls read from `functionCall` parts, from the `functionResponse` parts the
    next user message sends back."""
    for part in content:
        key = str(part["functionResponse"].get("id"))
        call = talk.pending.get(key)
        if call is None:
            continue
        output, error = replies.function_response([part])
        # an error is what the model was given back: the result too (`store/failed_calls.py`)
        talk.settle(key, "failed" if error else "completed",
                    result=output if output is not None else error, error=error or None,
                    at=call["started_at"])  # fmt: skip


def _session(unit: Unit, chat: Chat, talk: _Talk, form: str) -> dict[str, Any]:
    meta, info = chat.meta, unit.info
    subagent = meta.get("kind") == "subagent" or bool(info.get("child"))
    summary = meta.get("summary") if isinstance(meta.get("summary"), str) else None
    task = talk.title
    if subagent:  # a subagent's summary is its JSON result, and its first prompt its task
        talk.title = talk.fallback_title = None
    stamps = [t for t in (_time(meta.get("startTime")), _time(meta.get("lastUpdated")), *talk.times)
              if t]  # fmt: skip
    directories = meta.get("directories") if isinstance(meta.get("directories"), list) else None
    parent = None
    if info.get("parent"):
        parent = parent_source_id(unit.key, str(info["parent"]), meta.get("startTime"))
    return {
        "label": ids.session_label(PROVIDER, str(meta.get("sessionId") or talk.sid)),
        "title": None if subagent else summary,
        "created_at": min(stamps) if stamps else None,
        "updated_at": max(stamps) if stamps else None,
        "workspace_path": _workspace(unit) or (directories[0] if directories else None),
        "is_subagent": subagent,
        "parent_session_id": parent and ids.session_id(PROVIDER, parent),
        "parent_source_session_id": parent,
        "task_description": fields.cap(task, 2000) if subagent and task else None,
        "metadata": {
            "session_id": meta.get("sessionId"),
            "kind": meta.get("kind"),
            "format": form,
            "project_hash": meta.get("projectHash"),
            "directories": directories,
            "parent_session": info.get("parent"),
            "result": summary if subagent else None,
            "agents": sorted(talk.agents) or None,
            "unknown_records": dict(chat.unknown) or None,
        },
    }


def token_columns(tokens: dict[str, int]) -> dict[str, int]:
    """Gemini's TokensSummary in the ledger's convention: `input` (the prompt) holds `cached`
    but not the tool-use prompt (`tool`); `output` (candidates) leaves `thoughts` out. Input is
    prompt + tool-use prompt, output is candidates + thoughts, so their total is Gemini's."""
    counts = ledger_counts(input=tokens["input"] + tokens["tool"], output=tokens["output"],
                           cache_read=tokens["cached"], reasoning=tokens["thoughts"],
                           input_holds_cache=True, output_holds_reasoning=False)  # fmt: skip
    del counts["cache_write_tokens"]  # Gemini writes no cache: NULL, not 0
    return counts


def source_id(unit: Unit, meta: Mapping[str, Any]) -> str:
    """A main chat's sessionId with its file's start stamp: the CLI records a resumed session
    in a new file under the same sessionId, and a project directory moved by a migration
    leaves the same file under two names, which must stay one session. A subagent's id is its
    own."""
    sid = str(meta.get("sessionId") or os.path.basename(unit.key).rsplit(".", 1)[0])
    if unit.info.get("child"):
        return sid
    name = MAIN_FILE.match(os.path.basename(unit.key))
    return f"{sid}@{name.group(1) if name else _stamp(meta.get('startTime')) or 'unknown'}"


def parent_source_id(path: str, parent: str, child_start: Any) -> str:
    """The parent's source id: its sessionId and the stamp of the file it was recording when
    the subagent started (the newest such file not after it; the newest of all if none)."""
    chats = os.path.dirname(os.path.dirname(path))
    stamps = []
    for name in os.listdir(chats) if os.path.isdir(chats) else ():
        found = MAIN_FILE.match(name)
        if found and parent.startswith(found.group(2)[:8]) and found.group(2) != "":
            stamps.append(found.group(1))
    start = _stamp(child_start) or "9999"
    before = sorted(s for s in stamps if s <= start) or sorted(stamps)
    return f"{parent}@{before[-1]}" if before else f"{parent}@unknown"


def _workspace(unit: Unit) -> str | None:
    """The project's path: its `.project_root` marker (slug directories), else the path whose
    slug, or whose hash (the older directories), the registry `projects.json` gives."""
    project = os.path.join(unit.root, "tmp", os.path.relpath(unit.key, unit.root).split(os.sep)[1])
    try:
        marked = read_file(os.path.join(project, ".project_root")).decode().strip()
    except (OSError, UnicodeDecodeError):
        marked = ""
    try:
        registry = orjson.loads(read_file(os.path.join(unit.root, "projects.json")))
    except (OSError, orjson.JSONDecodeError):
        registry = {}
    projects = registry.get("projects") if isinstance(registry, dict) else None
    name = os.path.basename(project)
    for path, slug in projects.items() if isinstance(projects, dict) and not marked else ():
        if isinstance(path, str) and name in (slug, hashlib.sha256(path.encode()).hexdigest()):
            return path
    return marked or None


def _stamp(iso: Any) -> str | None:
    """`2026-04-16T22:50:54.889Z` → `2026-04-16T22-50`, the file names' form."""
    if not isinstance(iso, str) or not re.match(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", iso):
        return None
    return iso[:16].replace(":", "-")


def _recorded(root: str) -> set[str]:
    """The sessionId heads of every main chat file under the root: their prompts are theirs."""
    heads: set[str] = set()
    tmp = os.path.join(root, "tmp")
    for project in os.listdir(tmp) if os.path.isdir(tmp) else ():
        chats = os.path.join(tmp, project, "chats")
        for name in os.listdir(chats) if os.path.isdir(chats) else ():
            found = MAIN_FILE.match(name)
            if found:
                heads.add(found.group(2)[:8])
    return heads


def _first(*given: Any) -> Any:
    """What the model was given back for a call: its output, else its error (then the result
    too, `store/failed_calls.py`), else what the CLI displayed."""
    return next((value for value in given if value is not None), None)


def _time(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
