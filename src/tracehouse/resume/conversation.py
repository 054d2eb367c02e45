"""A session as the conversation a model saw: the steps an agent's resume sends back to it.

Prompts, answers and the tool calls each answer made (with their results), in the order of
the session's active thread, from the ledger alone: the agent's own file may be gone. What a
target cannot hold is counted by kind, so `resume` can say what was left out: thinking (the
model's, never sent back), images; notices (the agent's own, never the model's) are kept for
a restore and left out of another agent's session.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tracehouse.model.stored_json import decode_mapping
from tracehouse.model.threads import active_view
from tracehouse.model.timeline import timeline
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import find_session, session_detail


@dataclass(frozen=True)
class Call:
    name: str
    params: dict[str, Any]
    result: str | None
    failed: bool
    source_id: str | None  # the call's id in its source (`toolu_…`, `call_…`)
    exit_code: int | None = None  # a shell command's, where the agent said


@dataclass(frozen=True)
class Step:
    # user, assistant, context (a summary or instructions the model was given), or notice (the
    # agent's own, never the model's: an interruption, an error, "compacted")
    role: str
    text: str
    at: str | None
    source_id: str | None  # the message's id in its source
    model: str | None = None
    calls: tuple[Call, ...] = ()
    turn_id: str | None = None
    speaker: str | None = None  # a notice's role in its source: user, assistant or system


@dataclass(frozen=True)
class Conversation:
    session: dict[str, Any]  # the session's row
    steps: tuple[Step, ...]
    left_out: Counter[str] = field(default_factory=Counter)  # what no target holds, by kind
    turns: dict[str, dict[str, Any]] = field(default_factory=dict)  # by turn id: tokens, model

    @property
    def label(self) -> str:
        return str(self.session["label"])

    @property
    def prompts(self) -> list[str]:
        return [s.text for s in self.steps if s.role == "user"]

    @property
    def spoken(self) -> tuple[Step, ...]:
        """The steps the model saw: without the agent's notices."""
        return tuple(s for s in self.steps if s.role != "notice")


def conversation(store: SessionStore, ref: str) -> Conversation:
    """`ref` (a label, id or source id) as its conversation."""
    session = find_session(store, ref)
    detail = active_view(session_detail(store, session["session_id"]), "")
    steps: list[Step] = []
    left_out: Counter[str] = Counter()
    for entry in timeline(detail):
        m = entry.message
        calls = tuple(_call(c) for c in entry.calls)
        if m is None:  # calls of no message (Codex): the answer that made them
            first = entry.calls[0]
            steps.append(Step("assistant", "", first.get("started_at"), None, None, calls,
                              first.get("turn_id")))  # fmt: skip
            continue
        if entry.is_tool_result:
            continue  # its text is its call's result
        if m.get("thinking"):
            left_out["thinking"] += 1
        meta, _ = decode_mapping(m.get("meta"))
        if meta.get("images") or meta.get("attachments"):
            left_out["images"] += 1
        role = {"user": "user", "assistant": "assistant"}.get(m["role"], "context")
        if m["message_type"] == "host":
            role = "notice"
        text = m.get("content") or ""
        if not text and not calls:
            continue
        if calls and role != "assistant":  # a request that made calls (Codex's `/review`):
            steps.append(Step(role, text, m.get("created_at"), m.get("source_message_id"),
                              m.get("model"), (), m.get("turn_id"), m["role"]))  # fmt: skip
            # ...and, as in every agent's log, an answer made them: after the request
            at = m.get("created_at") or entry.calls[0].get("started_at")
            steps.append(Step("assistant", "", at, None, None, calls, m.get("turn_id")))
            continue
        steps.append(Step(role, text, m.get("created_at"), m.get("source_message_id"),
                          m.get("model"), calls, m.get("turn_id"), m["role"]))  # fmt: skip
    turns = {t["turn_id"]: t for t in detail["turns"]}
    return Conversation(session, tuple(steps), left_out, turns)


def _call(row: dict[str, Any]) -> Call:
    params, _ = decode_mapping(row.get("params"))
    meta, _ = decode_mapping(row.get("metadata"))
    failed = row.get("status") == "failed" or bool(row.get("error"))
    return Call(
        name=str(row["tool_name"]),
        params=params,
        result=row.get("error") if failed and row.get("error") else row.get("result"),
        failed=failed,
        source_id=row.get("source_tool_call_id"),
        exit_code=meta["exit_code"] if isinstance(meta.get("exit_code"), int) else None,
    )
