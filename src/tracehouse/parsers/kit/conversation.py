"""Turn assembly every source repeats, in one resumable place.

A source reads its records and says what happened: a prompt (`prompt`), a reply (`reply`), a
notice from the host (`notice`), a tool call and its result (`call`, `result`), a model call's
usage (`usage`). The conversation turns that into the ledger's rows: each prompt opens a turn,
replies and calls join the open turn, usage adds to it, and the session row is summed from them.
The title is the first prompt that gives one (`titles.prompt_title`), never blank where a prompt
exists.

It is resumable: `to_state()` is what a later append of a JSONL file needs (the open turn, the
calls still waiting for a result, the counters and the sums of closed turns), JSON-safe so it is
kept in the unit's watermark; `Conversation(..., state=...)` carries on from it. Rows with the
same key replace earlier ones in a batch and in the store, so an open turn or a pending call is
emitted again, complete, when a later chunk finishes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from tracehouse.model import ids
from tracehouse.model.fields import cap
from tracehouse.model.rows import TableBuffer, add_tokens, token_sums, turn_row
from tracehouse.model.tables import MESSAGES, TOKEN_COLUMNS, TOOL_CALLS, TURNS
from tracehouse.model.titles import first_line, prompt_title

STATE_VERSION = 1


class Conversation:
    def __init__(
        self,
        provider: str,
        source_session_id: str,
        source_path: str,
        max_field: int,
        state: Mapping[str, Any] | None = None,
    ) -> None:
        self.provider = provider
        self.sid = source_session_id
        self.session_id = ids.session_id(provider, source_session_id)
        self.source_path = source_path
        self.max_field = max_field
        self.turns = TableBuffer(TURNS)
        self.messages = TableBuffer(MESSAGES)
        self.calls = TableBuffer(TOOL_CALLS)
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

    # -- what a source says happened ----------------------------------------------------------

    def prompt(
        self,
        key: str,
        text: str | None,
        at: str | None,
        *,
        metadata: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
        titled: bool = True,
        own_turn: bool = False,
    ) -> str:
        """A person's prompt (source id `key`): a new turn opens with it, but for one that holds
        only what the host showed before anything was said (a launch's banner): the prompt
        joins it, so a session of three prompts has three turns; with `own_turn` it opens one
        all the same (a source whose notices before the first prompt are a turn of their own).
        `titled`: whether it may name the session (a slash command or a resumed task's note
        may not)."""
        if self.turn is None or self.said or own_turn:
            self.open_turn(key, at)
        message_id = self.message("user", "user", key, text, at, metadata=metadata,
                                  context=context)  # fmt: skip
        assert self.turn is not None
        self.turn["query_message_ids"].append(message_id)
        if titled and text:
            self.title = self.title or prompt_title(text)
            self.fallback_title = self.fallback_title or first_line(text)
        return message_id

    def reply(
        self,
        key: str,
        text: str | None,
        at: str | None,
        *,
        thinking: str | None = None,
        model: str | None = None,
        llm_provider: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """The model's reply: joins the open turn (one opens if none is), and is its response."""
        self.ensure_turn(key, at)
        assert self.turn is not None
        message_id = self.message("assistant", "assistant", key, text, at, thinking=thinking,
                                  model=model, metadata=metadata)  # fmt: skip
        self.turn["response_message_id"] = message_id
        self.note_model(model, llm_provider, used=True)
        return message_id

    def notice(
        self, key: str, text: str | None, at: str | None, metadata: Mapping[str, Any] | None = None
    ) -> str:
        """What the host showed or injected (an error, a status line): kept apart from what the
        model saw, as a `host` message of the open turn."""
        said = self.said  # a notice alone is not a conversation (a session opened and left)
        self.ensure_turn(key, at)
        message_id = self.message("system", "host", key, text, at, metadata=metadata)
        self.said = said
        return message_id

    def preamble(self, key: str, text: str | None, at: str | None) -> str:
        """What the agent is told before anything is said (its system prompt): a `system`
        message of the first turn, which the first prompt then joins."""
        said = self.said
        self.ensure_turn(key, at)
        message_id = self.message("system", "system", key, text, at)
        self.said = said
        return message_id

    def context(
        self, key: str, text: str | None, at: str | None, metadata: Mapping[str, Any] | None = None
    ) -> None:
        """What the host gives the model to read before a prompt (Gemini CLI's session context):
        a `system` message at the start of the turn the next record opens."""
        self.waiting.append([key, text, at, dict(metadata) if metadata else None])

    def note_model(
        self, model: str | None, llm_provider: str | None = None, *, used: bool = False
    ) -> None:
        """The model from now on; `used`: the open turn's call was made with it (a reply's
        model), not only chosen for the calls to come (a model switch)."""
        if model:
            self.model, self.llm_provider = str(model), llm_provider or self.llm_provider
            if used and self.turn is not None:
                self.turn["model"] = self.model
                self.turn["llm_provider"] = self.llm_provider

    def call(
        self,
        key: str,
        name: str,
        params: Any,
        at: str | None,
        *,
        message_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A tool call (source id `key`), pending until its result; a repeated key updates it."""
        self.ensure_turn(key, at)
        assert self.turn is not None
        row = self.pending.get(key)
        if row is None:
            row = {
                "tool_call_id": ids.tool_call_id(self.provider, self.sid, key),
                "session_id": self.session_id,
                "turn_id": self.turn["turn_id"],
                "message_id": message_id,
                "source_tool_call_id": key,
                "seq": self._next("calls"),
                "tool_name": name or "tool",
                "params": None,
                "result": None,
                "status": "pending",
                "error": None,
                "started_at": at,
                "completed_at": None,
                "metadata": None,
            }
            self.pending[key] = row
        if params not in (None, "", {}):
            # A JSON column holds JSON text: arguments that did not parse stay a JSON string.
            row["params"] = orjson.dumps(params).decode() if isinstance(params, str) else params
        if metadata:
            row["metadata"] = {**(row["metadata"] or {}), **metadata}
        self.seen(at)
        self.said = True
        return row

    def spawned(self, key: str, child: str) -> None:
        """The pending call `key` gave a subagent its task: its session is `child` (a source id);
        the store links the child back to the call."""
        row = self.pending.get(key)
        if row is not None:
            row["spawned_session_id"] = ids.session_id(self.provider, child)
            row["spawned_source_session_id"] = child

    def result(
        self,
        key: str,
        output: str | None,
        at: str | None,
        *,
        failed: bool = False,
        name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """A call's result: completes it (a result whose call was never seen makes the call)."""
        row = self.pending.pop(key, None)
        if row is None:  # its call was never seen: the result says one was made
            row = self.call(key, name or "tool", None, at)
            del self.pending[key]
        text = cap(output, self.max_field) if output else None
        row["status"] = "failed" if failed else "completed"
        # `result` is what the tool gave back whatever its status; a failed call's is also why
        # it failed (`store/failed_calls.py`)
        row["result"] = text
        if failed:
            row["error"] = text
        row["completed_at"] = at or row["started_at"]
        if metadata:
            row["metadata"] = {**(row["metadata"] or {}), **metadata}
        self.calls.add(row)
        self.seen(at)

    def usage(self, counts: Mapping[str, int], cost: float | None = None) -> None:
        """One model call's tokens in the ledger's convention (`model.tokens.ledger_counts`),
        added to the open turn; all zero records nothing."""
        if self.turn is None:
            self.open_turn("usage", None)
        assert self.turn is not None
        add_tokens(self.turn, counts.items())
        if cost:
            meta = self.turn["metadata"] = self.turn["metadata"] or {}
            meta["cost_usd"] = round(meta.get("cost_usd", 0) + float(cost), 10)
            self.cost = round(self.cost + float(cost), 10)

    def unknown(self, kind: str) -> str:
        """A record of a kind the source's parser does not know: counted in the session's
        metadata (`unknown_records`), so what a new release adds shows instead of vanishing."""
        self.unknowns[kind] = self.unknowns.get(kind, 0) + 1
        return f"unknown.{kind}"

    def end_turn(self, status: str | None = None, at: str | None = None) -> None:
        if self.turn is not None:
            if status:
                self.turn["status"] = status
            if at:
                self.turn["completed_at"] = max(filter(None, (self.turn["completed_at"], at)))

    # -- rows ----------------------------------------------------------------------------------

    def open_turn(self, key: str, at: str | None) -> None:
        self._close_turn()
        seq = self._next("turns")
        self.turn = turn_row(self.provider, self.sid, f"{key}", seq, self.last_turn_id, at,
                             self.llm_provider)  # fmt: skip
        self.last_turn_id = self.turn["turn_id"]
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
    ) -> str:
        self.ensure_turn(key, at)
        assert self.turn is not None
        message_id = ids.message_id(self.provider, self.sid, key)
        if self.last[0] != key:
            self.last = [key, self._next("messages")]
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
                "model": model if role == "assistant" else None,
                "metadata": dict(metadata) if metadata else None,
                "context": dict(context) if context else None,
                "source_ref": f"{self.source_path}#{key}",
            }
        )
        if at:
            self.turn["completed_at"] = max(filter(None, (self.turn["completed_at"], at)))
        self.seen(at)
        self.said = True
        return message_id

    def message_id(self, key: str) -> str:
        return ids.message_id(self.provider, self.sid, key)

    def _close_turn(self) -> None:
        if self.turn is not None:
            self.turns.add(self.turn)
            sums = token_sums([{**self.closed}, self.turn])
            self.closed = sums
            self.turn = None

    def _next(self, what: str) -> int:
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
        return [self.turns, self.messages, self.calls]

    def session_row(self, **fields: Any) -> dict[str, Any]:
        """The session row from what was read; `fields` add to it or override it (a source's
        own title, workspace, version, metadata)."""
        sums = token_sums([self.closed, self.turn or {}])
        title = fields.pop("title", None) or self.title or self.fallback_title
        metadata = {k: v for k, v in (fields.pop("metadata", None) or {}).items()
                    if v not in (None, "", [], {})}  # fmt: skip
        if self.cost:
            metadata.setdefault("cost_usd", self.cost)
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
