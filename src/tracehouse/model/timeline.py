"""A session's rows in reading order, shared by every renderer (terminal, Markdown, HTML).

Messages come in `seq` order, each with the tool calls it made and the sources it cited. Calls
made without a message of their own (Codex calls follow reasoning, not text) are placed between
the messages by time. Renderers decide what to show of each entry; the order is decided here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracehouse.model.stored_json import decode_mapping

UNATTRIBUTED = frozenset({"typed", "task"})  # typed input; a task's tool is named by `via`
ROLE_TITLES = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}

Row = dict[str, Any]


@dataclass(frozen=True)
class Entry:
    """One message with what hangs off it, or (message None) one call of no message."""

    message: Row | None
    calls: list[Row] = field(default_factory=list)
    sources: list[Row] = field(default_factory=list)

    @property
    def is_tool_result(self) -> bool:
        return self.message is not None and self.message["message_type"] == "tool_result"


def timeline(detail: dict[str, Any], *, context_only: bool = False) -> Iterator[Entry]:
    """`detail` as `store.reads.session_detail` loads it. `context_only` leaves out operational
    `host` notices, which the model never saw."""
    calls_by_message: dict[str | None, list[Row]] = {}
    for call in detail["tool_calls"]:
        calls_by_message.setdefault(call["message_id"], []).append(call)
    sources_by_message: dict[str | None, list[Row]] = {}
    for source in detail["sources"]:
        sources_by_message.setdefault(source["message_id"], []).append(source)
    loose = sorted(calls_by_message.pop(None, []), key=lambda c: (c["started_at"] or "", c["seq"]))
    for m in detail["messages"]:
        while loose and (loose[0]["started_at"] or "") < (m["created_at"] or ""):
            yield Entry(None, [loose.pop(0)])
        if context_only and m["message_type"] == "host":
            continue
        id_ = m["message_id"]
        yield Entry(m, calls_by_message.get(id_, []), sources_by_message.get(id_, []))
    for call in loose:
        yield Entry(None, [call])


def children_by_call(detail: dict[str, Any]) -> dict[str, Row]:
    """The subagents a session spawned, by the tool call that spawned them."""
    return {c["spawn_tool_call_id"]: c for c in detail["children"] if c["spawn_tool_call_id"]}


def unplaced_children(detail: dict[str, Any]) -> list[Row]:
    """Subagents whose spawning call this session does not hold: listed at its end."""
    calls = {c["tool_call_id"] for c in detail["tool_calls"]}
    return [c for c in detail["children"] if c["spawn_tool_call_id"] not in calls]


def role_title(message: Row) -> str:
    if message["message_type"] == "host":
        return "Notice"
    role = str(message["role"])
    return ROLE_TITLES.get(role, role.title())


def attribution(meta: dict[str, Any], labels: dict[str, str]) -> list[str]:
    """How a message arrived, for its heading: `from <agent label> via <tool or source>`.

    Typed input carries none; everything else (exec, review, task, teammate, hook, …) names
    its source, and the agent that sent it by the label a user can open."""
    notes = []
    agent = meta.get("source_agent_id")
    if agent:
        notes.append(f"from {labels.get(str(agent), agent)}")
    source = meta.get("source")
    if meta.get("via"):
        notes.append(f"via {meta['via']}")
    elif source and source not in UNATTRIBUTED:
        notes.append(f"via {source}")
    if meta.get("queued"):
        notes.append("queued while the agent worked")
    return notes


def message_notes(message: Row, labels: dict[str, str]) -> list[str]:
    """The attribution of a message, and a note when its stored attribution cannot be read."""
    meta, problem = decode_mapping(message.get("meta"))
    notes = attribution(meta, labels)
    if problem is not None:
        notes.append(f"attribution unreadable: {problem.reason}")
    return notes


# The marker `fields.cap` leaves on a title cut to its limit: the hash is for the ledger, not
# for the people reading a heading.
_CUT_MARK = re.compile(r"\s*…\[cut: [0-9]+ bytes in full, xxh3-128 [0-9a-f]+\]$")


def session_title(session: Row) -> str:
    title = " ".join((session.get("title") or session.get("task_description") or "").split())
    return _CUT_MARK.sub("…", title) or session["label"]


def pretty_params(params: Any) -> str:
    """A tool call's parameters as indented JSON ('' for none); text that is not JSON as is."""
    if params in (None, "", "{}", {}):
        return ""
    if isinstance(params, str):
        try:
            params = orjson.loads(params)
        except orjson.JSONDecodeError:
            return str(params)
    return orjson.dumps(params, option=orjson.OPT_INDENT_2).decode()
