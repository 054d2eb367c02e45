"""Turn assembly every source repeats, in one resumable place.

A source reads its records and says what happened: a prompt (`prompt`), a reply (`reply`), a
notice from the host (`notice`), a tool call and its result (`call`, `result`, or `settle` for
an outcome a snapshot states whole), a model call's usage (`usage`). The conversation turns that
into the ledger's rows (`turn_rows.py`): each prompt opens a turn, replies and calls join the
open turn (or, `answering`, the turn of the prompt they name), usage adds to it, and the session
row is summed from them. The title is the first prompt that gives one (`titles.prompt_title`),
never blank where a prompt exists.

It is resumable: `to_state()` is what a later append of a JSONL file needs (the open turn, the
calls still waiting for a result, the counters and the sums of closed turns);
`Conversation(..., state=...)` carries on from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import orjson

from tracehouse.model import ids
from tracehouse.model.fields import cap
from tracehouse.model.rows import add_tokens, token_sums
from tracehouse.model.tables import TOKEN_COLUMNS
from tracehouse.model.titles import first_line, prompt_title
from tracehouse.parsers.kit.turn_rows import TurnRows


class Conversation(TurnRows):
    """What a source says happened, as the ledger's rows."""

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
        self.turn_of[key] = self.turn
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
        context: Mapping[str, Any] | None = None,
    ) -> str:
        """The model's reply: joins the open turn (one opens if none is), and is its response."""
        self.ensure_turn(key, at)
        assert self.turn is not None
        message_id = self.message("assistant", "assistant", key, text, at, thinking=thinking,
                                  model=model, metadata=metadata, context=context)  # fmt: skip
        self.turn["response_message_id"] = message_id
        self.note_model(model, llm_provider, used=True)
        return message_id

    def notice(
        self,
        key: str,
        text: str | None,
        at: str | None,
        metadata: Mapping[str, Any] | None = None,
        *,
        ref: str | None = None,
    ) -> str:
        """What the host showed or injected (an error, a status line): kept apart from what the
        model saw, as a `host` message of the open turn. `ref`: the source key it was read
        from, where that is not `key` (a notice drawn from a reply's record)."""
        said = self.said  # a notice alone is not a conversation (a session opened and left)
        self.ensure_turn(key, at)
        message_id = self.message("system", "host", key, text, at, metadata=metadata, ref=ref)
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
            turn = self.turn
            if used and turn is not None and not (self.turn_model == "first" and turn["model"]):
                turn["model"], turn["llm_provider"] = self.model, self.llm_provider

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
                "seq": self.next_seq("calls"),
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

    def settle(
        self,
        key: str,
        status: str,
        *,
        result: Any = None,
        error: Any = None,
        at: str | None = None,
        child: str | None = None,
        final: bool = True,
    ) -> None:
        """A call's outcome as the source states it whole (a snapshot's status, result and
        error, each text or JSON): the pending call `key` takes them and is emitted as it
        stands, `running` or `pending` too; `child`: the subagent session it spawned. Not
        `final`: its result may still come (a later `settle`), so it stays pending."""
        row = self.pending[key] if not final else self.pending.pop(key)
        row.update(status=status, result=self._text(result), error=self._text(error),
                   completed_at=at)  # fmt: skip
        if child:
            row["spawned_session_id"] = ids.session_id(self.provider, child)
            row["spawned_source_session_id"] = child
        if final:
            self.calls.add(row)

    def _text(self, value: Any) -> str | None:
        if value is None:  # an empty result is one: the tool gave back nothing
            return None
        return cap(value if isinstance(value, str) else orjson.dumps(value).decode(),
                   self.max_field)  # fmt: skip

    @contextmanager
    def answering(self, key: str) -> Iterator[None]:
        """What is said within answers the prompt `key`, or joins the turn `key` opened
        (OpenCode's replies name the prompt they answer, which a queued prompt may have
        followed): it joins that turn, open or closed, and a closed one is emitted again."""
        turn = self.turn_of.get(key)
        if turn is None or turn is self.turn:
            yield
            return
        before, opened, self.turn = token_sums([turn]), self.turn, turn
        try:
            yield
        finally:
            self.turn = opened
            self.turns.add(turn)
            grown = {c: (turn[c] or 0) - (before[c] or 0) for c in TOKEN_COLUMNS}
            self.closed = token_sums([self.closed, {c: n for c, n in grown.items()
                                                    if turn[c] is not None}])  # fmt: skip

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
