"""Turns: `task_started`/`turn_context` ids where the rollout has them, else one per prompt.

A turn closes at `task_complete` (completed) or `turn_aborted` (aborted: its calls still
waiting for output fail), or when the next one opens. Token increments land in the open turn.
The rows, their places and the session's sums are the parser kit's (`kit.turn_rows`): this is
what opens and closes them in a rollout.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Protocol

from tracehouse.model.rows import TableBuffer, add_tokens

if TYPE_CHECKING:
    from tracehouse.parsers.codex.copied import CopiedHistory
    from tracehouse.parsers.codex.session import SessionAggregate
    from tracehouse.parsers.kit.turn_rows import TurnRows


class TurnsRollout(Protocol):
    """What the turns ask of the rollout being read (`builder.RolloutBuilder`)."""

    ts: str | None
    thinking: list[str]
    agg: SessionAggregate
    copied: CopiedHistory
    talk: TurnRows
    messages: TableBuffer
    tool_calls: TableBuffer

    def freeze_sid(self) -> str: ...

    def new_message(
        self, offset: int, role: str, mtype: str, key: str | None = None
    ) -> dict[str, Any]: ...


TOKEN_COLUMNS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens",
                 "cache_write_tokens")  # the order of `records.USAGE_FIELDS`  # fmt: skip


class Turns:
    def __init__(self, builder: TurnsRollout, state: dict[str, Any]) -> None:
        # A proxy: the builder owns these turns, and a reference back would keep the two, with
        # every row of the rollout, alive until the garbage collector's next full pass.
        self.b: TurnsRollout = weakref.proxy(builder)
        self.talk = builder.talk  # the rows (which hold no reference back)
        self.explicit: bool = state.get("explicit", False)  # the rollout names its turns

    @property
    def current(self) -> dict[str, Any] | None:
        return self.talk.turn

    def start(self, key: str, ts: str | None, *, implicit: bool = False) -> dict[str, Any]:
        """A thread is linear: each turn follows the one before (a fork's first own turn follows
        the last turn of the history it copied, which the rollout replays first)."""
        self.close()
        self.b.freeze_sid()
        talk = self.talk
        talk.open_turn(key, ts)
        turn = talk.turn
        assert turn is not None
        if turn["parent_turn_id"] == turn["turn_id"]:  # the same turn named again
            turn["parent_turn_id"] = None
        self.set_model(turn, self.b.agg.model)
        turn["metadata"] = {"implicit": True} if implicit else {}
        if self.b.copied.active:  # a turn of the copied history, with its calls
            turn["metadata"]["replayed_from"] = self.b.copied.source
        return turn

    @staticmethod
    def set_model(turn: dict[str, Any], model: Any) -> None:
        turn["model"] = model
        turn["llm_provider"] = "openai" if model else None

    def ensure(self, key: str, ts: str | None) -> dict[str, Any]:
        """Output before any turn opened (a resumed tail, an older file) still has a turn."""
        turn = self.talk.turn
        if turn is None:
            return self.start(key, ts, implicit=True)
        if ts:
            turn["completed_at"] = ts
        return turn

    def prompt(self, row: dict[str, Any], ts: str | None) -> None:
        if self.explicit and self.current is not None:
            turn = self.current
        elif self.explicit:
            turn = self.ensure(str(row["source_message_id"]), ts)
        else:
            turn = self.start(str(row["source_message_id"]), ts)
        row["turn_id"] = turn["turn_id"]
        turn["query_message_ids"].append(row["message_id"])

    def note_context(self, p: dict[str, Any], offset: int) -> None:
        turn_id = p.get("turn_id")
        if isinstance(turn_id, str) and turn_id:
            self.explicit = True
            if self.current is None or self.current["source_turn_id"] != turn_id:
                self.start(turn_id, self.b.ts)
        if self.current is not None and isinstance(p.get("model"), str):
            self.set_model(self.current, p["model"])

    def task_started(self, p: dict[str, Any], offset: int) -> None:
        self.explicit = True
        key = str(p["turn_id"]) if isinstance(p.get("turn_id"), str) else f"line:{offset}"
        if self.current is None or self.current["source_turn_id"] != key:
            self.start(key, self.b.ts)
        assert self.current is not None
        if p.get("model_context_window"):
            self.current["metadata"]["context_window"] = p["model_context_window"]

    def task_complete(self, p: dict[str, Any]) -> None:
        turn = self.current
        if turn is None:
            return
        for key in ("duration_ms", "time_to_first_token_ms"):
            if p.get(key) is not None:
                turn["metadata"][key] = p[key]
        if isinstance(p.get("error"), dict):
            turn["status"] = "error"
            turn["metadata"]["error"] = p["error"].get("message")
        self.close()

    def abort(self, reason: Any) -> None:
        turn = self.current
        if turn is None:
            return
        turn["status"] = "aborted"
        turn["metadata"]["abort_reason"] = reason
        pending = self.talk.pending
        for key, call in list(pending.items()):
            if call["turn_id"] == turn["turn_id"]:
                call.update(
                    status="failed", error=f"turn aborted ({reason})", completed_at=self.b.ts
                )
                self.b.tool_calls.add(pending.pop(key))
        self.close()

    def add_tokens(self, delta: list[int], offset: int) -> None:
        turn = self.ensure(f"line:{offset}", self.b.ts)
        add_tokens(turn, zip(TOKEN_COLUMNS, delta, strict=True))
        if turn["input_tokens"] is not None:  # the counts are set together, or none is
            turn["total_tokens"] = turn["input_tokens"] + turn["output_tokens"]

    def close(self) -> None:
        if self.current is None:
            return
        if self.b.thinking:  # reasoning that no assistant message followed
            key = f"thinking:{self.current['source_turn_id']}"
            row = self.b.new_message(0, "assistant", "assistant", key)
            row["thinking"] = "\n\n".join(self.b.thinking)
            self.b.thinking = []
            self.b.messages.add(row)
        self.talk.close_turn()

    def to_state(self) -> dict[str, Any]:
        return {"explicit": self.explicit}
