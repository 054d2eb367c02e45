"""What a conversation (`conversation.py`) has made so far: its open turn, counters and rows,
the session row summed from them, and the resume state.

Rows with the same key replace earlier ones in a batch and in the store, so an open turn or a
pending call is emitted again, complete, when a later chunk finishes it. `to_state()` is
JSON-safe, kept in the unit's watermark; a `Conversation(..., state=...)` carries on from it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from tracehouse.model import ids
from tracehouse.model.fields import cap
from tracehouse.model.rows import TableBuffer, token_sums, turn_row
from tracehouse.model.tables import MESSAGE_SOURCES, MESSAGES, TOKEN_COLUMNS, TOOL_CALLS, TURNS

STATE_VERSION = 1


class TurnRows:
    def __init__(
        self,
        provider: str,
        source_session_id: str,
        source_path: str,
        max_field: int,
        state: Mapping[str, Any] | None = None,
        *,
        turn_model: Literal["first", "last"] = "last",
        carry_provider: bool = True,
        stated_ends: bool = False,
    ) -> None:
        """`turn_model`: which reply's model is a turn's (Gemini CLI: its first one's);
        `carry_provider`: a turn starts with the provider of the calls before it (a source that
        names it once), or has only its own replies' (OpenCode); `stated_ends`: a turn ends
        when the source says (`end_turn(at=…)`: OpenCode's replies' completion), not at its
        last message's time."""
        self.provider = provider
        self.turn_model = turn_model
        self.carry_provider = carry_provider
        self.stated_ends = stated_ends
        self.sid = source_session_id
        self.session_id = ids.session_id(provider, source_session_id)
        self.source_path = source_path
        self.max_field = max_field
        self.turns = TableBuffer(TURNS)
        self.messages = TableBuffer(MESSAGES)
        self.calls = TableBuffer(TOOL_CALLS)
        self.sources = TableBuffer(MESSAGE_SOURCES)
        s = state if state and state.get("v") == STATE_VERSION else {}
        self.turn: dict[str, Any] | None = s.get("turn")
        self.pending: dict[str, dict[str, Any]] = dict(s.get("pending") or {})
        self.counts: dict[str, int] = dict(s.get("counts") or {"turns": 0, "messages": 0,
                                                                "calls": 0})  # fmt: skip
        self.closed: dict[str, int | None] = dict(s.get("closed") or dict.fromkeys(TOKEN_COLUMNS))
        self.cost: float = float(s.get("cost") or 0.0)
        self.stamps: list[str] = list(s.get("stamps") or [])  # [first, last] seen
        self.title: str | None = s.get("title")
        self.fallback_title: str | None = s.get("fallback_title")
        self.model: str | None = s.get("model")
        self.llm_provider: str | None = s.get("llm_provider")
        self.last_turn_id: str | None = s.get("last_turn_id")
        self.said = bool(s.get("said"))  # anything conversational yet
        # The last message's key and place: a message said again (streamed in parts, re-emitted
        # by a later chunk) keeps its place instead of taking a new one.
        self.last: list[Any] = list(s.get("last") or [None, 0])
        self.unknowns: dict[str, int] = dict(s.get("unknowns") or {})
        # What the host gave the model to read first, waiting for the turn it opens (`context`).
        self.waiting: list[list[Any]] = list(s.get("waiting") or [])
        # Within one parse, each turn by the key that opened it and by its prompts' keys
        # (`answering`): a resumed conversation knows only its open turn.
        self.turn_of: dict[str, dict[str, Any]] = {}

    def name_session(self, source_session_id: str) -> None:
        """The session's id, where the source learns it from its records (Codex's thread id):
        before any row is made, since every row's id is derived from it."""
        self.sid = source_session_id
        self.session_id = ids.session_id(self.provider, source_session_id)

    def open_turn(self, key: str, at: str | None) -> None:
        self.close_turn()
        seq = self.next_seq("turns")
        self.turn = turn_row(self.provider, self.sid, f"{key}", seq, self.last_turn_id, at,
                             self.llm_provider if self.carry_provider else None)  # fmt: skip
        self.last_turn_id = self.turn["turn_id"]
        self.turn_of[key] = self.turn
        self.seen(at)
        waiting, self.waiting = self.waiting, []
        for said_key, text, said_at, metadata in waiting:
            self.message("system", "system", said_key, text, said_at, metadata=metadata)

    def ensure_turn(self, key: str, at: str | None) -> None:
        if self.turn is None:
            self.open_turn(key, at)

    def message(
        self,
        role: str,
        message_type: str,
        key: str,
        text: str | None,
        at: str | None,
        *,
        thinking: str | None = None,
        model: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
        ref: str | None = None,
    ) -> str:
        self.ensure_turn(key, at)
        assert self.turn is not None
        message_id = ids.message_id(self.provider, self.sid, key)
        if self.last[0] != key:
            self.last = [key, self.next_seq("messages")]
        self.messages.add(
            {
                "message_id": message_id,
                "session_id": self.session_id,
                "turn_id": self.turn["turn_id"],
                "source_message_id": key,
                "parent_message_id": None,
                "seq": self.last[1],
                "role": role,
                "message_type": message_type,
                "content": cap(text, self.max_field) if text else None,
                "thinking": cap(thinking, self.max_field) if thinking else None,
                "created_at": at,
                "model": model,  # a prompt's: the model asked to answer it (Cursor's bubbles)
                "metadata": dict(metadata) if metadata else None,
                "context": dict(context) if context else None,
                "source_ref": f"{self.source_path}#{ref or key}",
            }
        )
        if at and not self.stated_ends:
            self.turn["completed_at"] = max(filter(None, (self.turn["completed_at"], at)))
        self.seen(at)
        self.said = True
        return message_id

    def cite(self, message_id: str, source: Mapping[str, Any], at: str | None) -> None:
        """A source the message cites (a file read, a page fetched, a chunk attached):
        `source_type` and `uri`, and where the source says them `title`, `content_preview`,
        `metadata`."""
        source_id = ids.source_id(source["source_type"], source["uri"])
        self.sources.add({**source, "message_id": message_id, "session_id": self.session_id,
                          "source_id": source_id, "created_at": at})  # fmt: skip

    def message_id(self, key: str) -> str:
        return ids.message_id(self.provider, self.sid, key)

    def close_turn(self) -> None:
        """The open turn is done: emitted, its tokens added to the session's."""
        if self.turn is not None:
            self.turns.add(self.turn)
            sums = token_sums([{**self.closed}, self.turn])
            self.closed = sums
            self.turn = None

    def next_seq(self, what: str) -> int:
        """The next place of a turn, message or call (`what`), counted: a source that makes a
        row of its own takes its place here."""
        self.counts[what] += 1
        return self.counts[what] - 1

    def seen(self, at: str | None) -> None:
        if at:
            self.stamps = [min(self.stamps[0], at), max(self.stamps[1], at)] if self.stamps \
                else [at, at]  # fmt: skip

    def finish(self) -> dict[str, Any]:
        """Emit the open turn and the calls still pending; returns the resume state."""
        if self.turn is not None:
            self.turns.add(self.turn)
        for row in self.pending.values():
            self.calls.add(row)
        return self.to_state()

    def to_state(self) -> dict[str, Any]:
        return {
            "v": STATE_VERSION,
            "turn": self.turn,
            "pending": self.pending,
            "counts": self.counts,
            "closed": self.closed,
            "cost": self.cost,
            "stamps": self.stamps,
            "title": self.title,
            "fallback_title": self.fallback_title,
            "model": self.model,
            "llm_provider": self.llm_provider,
            "last_turn_id": self.last_turn_id,
            "said": self.said,
            "last": self.last,
            "unknowns": self.unknowns,
            # only when something waits: the states of the sources that never use it stay as
            # they were (a watermark written before `context` existed reads the same)
            **({"waiting": self.waiting} if self.waiting else {}),
        }

    def has_content(self) -> bool:
        return self.said

    def buffers(self) -> list[TableBuffer]:
        return [self.turns, self.messages, self.calls, self.sources]

    def session_row(self, **fields: Any) -> dict[str, Any]:
        """The session row from what was read; `fields` add to it or override it (a source's
        own title, workspace, version, metadata)."""
        sums = token_sums([self.closed, self.turn or {}])
        title = fields.pop("title", None) or self.title or self.fallback_title
        metadata = dict(fields.pop("metadata", None) or {})
        if self.cost:  # the calls' sum, unless the source names its own (None: it keeps none)
            metadata.setdefault("cost_usd", self.cost)
        metadata = {k: v for k, v in metadata.items() if v not in (None, "", [], {})}
        if self.unknowns:
            metadata["unknown_records"] = dict(sorted(self.unknowns.items()))
        workspace = fields.get("workspace_path")
        row = {
            "session_id": self.session_id,
            "source_provider": self.provider,
            "source_session_id": self.sid,
            "label": ids.session_label(self.provider, self.sid),
            "title": cap(title, 200) if title else None,
            "created_at": self.stamps[0] if self.stamps else None,
            "updated_at": self.stamps[1] if self.stamps else None,
            "model": self.model,
            "llm_provider": self.llm_provider,
            "project": project_name(workspace),
            "entrypoint": "cli",
            "is_subagent": False,
            **sums,
            "turn_count": self.counts["turns"],
            "message_count": self.counts["messages"],
            "tool_call_count": self.counts["calls"],
            "metadata": metadata or None,
            "source_path": self.source_path,
        }
        row.update(fields)
        return row


def project_name(workspace: Any) -> str | None:
    """A workspace's last path part, whichever separator its OS wrote."""
    if not isinstance(workspace, str) or not workspace.strip("/\\"):
        return None
    return re.split(r"[\\/]", workspace.rstrip("/\\"))[-1] or None
