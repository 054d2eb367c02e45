"""Turns: `task_started`/`turn_context` ids where the rollout has them, else one per prompt.

A turn closes at `task_complete` (completed) or `turn_aborted` (aborted: its calls still
waiting for output fail), or when the next one opens. Token increments land in the open turn.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Protocol

from tracehouse.model import ids
from tracehouse.model.rows import TableBuffer, add_tokens
from tracehouse.model.tables import TURNS
from tracehouse.parsers.codex import records as rec

if TYPE_CHECKING:
    from tracehouse.parsers.codex.copied import CopiedHistory
    from tracehouse.parsers.codex.session import SessionAggregate


class TurnsRollout(Protocol):
    """What the turns ask of the rollout being read (`builder.RolloutBuilder`)."""

    ts: str | None
    thinking: list[str]
    pending: dict[str, dict[str, Any]]
    agg: SessionAggregate
    copied: CopiedHistory
    messages: TableBuffer
    tool_calls: TableBuffer

    @property
    def session_id(self) -> str: ...

    def freeze_sid(self) -> str: ...

    def new_message(
        self, offset: int, role: str, mtype: str, key: str | None = None
    ) -> dict[str, Any]: ...

PROVIDER = rec.PROVIDER
TOKEN_COLUMNS = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cache_write_tokens",
)
PRIVATE = ("last_assistant_id",)  # kept in the open turn, not a column


class Turns:
    def __init__(self, builder: TurnsRollout, state: dict[str, Any]) -> None:
        # A proxy: the builder owns these turns, and a reference back would keep the two, with
        # every row of the rollout, alive until the garbage collector's next full pass.
        self.b: TurnsRollout = weakref.proxy(builder)
        self.current: dict[str, Any] | None = state.get("turn")
        self.seq: int = state.get("turn_seq", 0)
        self.explicit: bool = state.get("explicit", False)  # the rollout names its turns
        # A thread is linear: each turn follows the one before (a fork's first own turn follows
        # the last turn of the history it copied, which the rollout replays first).
        self.last: str | None = state.get("last_turn")
        self.rows = TableBuffer(TURNS)

    def start(self, key: str, ts: str | None, *, implicit: bool = False) -> dict[str, Any]:
        parent = self.current["turn_id"] if self.current is not None else self.last
        self.close()
        sid = self.b.freeze_sid()
        turn: dict[str, Any] = {
            "turn_id": ids.turn_id(PROVIDER, sid, key),
            "session_id": self.b.session_id,
            "source_turn_id": key,
            "parent_turn_id": parent if parent != ids.turn_id(PROVIDER, sid, key) else None,
            "seq": self.seq,
            "started_at": ts,
            "completed_at": ts,
            "model": self.b.agg.model,
            "llm_provider": None,
            **dict.fromkeys(TOKEN_COLUMNS),
            "status": "completed",
            "response_message_id": None,
            "query_message_ids": [],
            "metadata": {"implicit": True} if implicit else {},
        }
        if self.b.copied.active:  # a turn of the copied history, with its calls
            turn["metadata"]["replayed_from"] = self.b.copied.source
        self.current = turn
        self.last = turn["turn_id"]
        self.seq += 1
        self.b.agg.turns += 1
        return turn

    def ensure(self, key: str, ts: str | None) -> dict[str, Any]:
        """Output before any turn opened (a resumed tail, an older file) still has a turn."""
        if self.current is None:
            return self.start(key, ts, implicit=True)
        if ts:
            self.current["completed_at"] = ts
        return self.current

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
            self.current["model"] = p["model"]

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
        for key, call in list(self.b.pending.items()):
            if call["turn_id"] == turn["turn_id"]:
                call.update(
                    status="failed", error=f"turn aborted ({reason})", completed_at=self.b.ts
                )
                self.b.tool_calls.add(self.b.pending.pop(key))
        self.close()

    def add_tokens(self, delta: list[int], offset: int) -> None:
        turn = self.ensure(f"line:{offset}", self.b.ts)
        add_tokens(turn, zip(TOKEN_COLUMNS, delta, strict=True))

    def close(self) -> None:
        if self.current is None:
            return
        if self.b.thinking:  # reasoning that no assistant message followed
            key = f"thinking:{self.current['source_turn_id']}"
            row = self.b.new_message(0, "assistant", "assistant", key)
            row["thinking"] = "\n\n".join(self.b.thinking)
            self.b.thinking = []
            self.b.messages.add(row)
        self.emit()
        self.current = None

    def emit(self) -> None:
        assert self.current is not None
        turn = {k: v for k, v in self.current.items() if k not in PRIVATE}
        turn["llm_provider"] = "openai" if turn.get("model") else None
        if turn["input_tokens"] is not None:  # the counts are set together, or none is
            turn["total_tokens"] = turn["input_tokens"] + turn["output_tokens"]
        self.rows.add(turn)

    def flush(self) -> None:
        if self.current is not None:
            self.emit()

    def to_state(self) -> dict[str, Any]:
        return {"turn": self.current, "turn_seq": self.seq, "explicit": self.explicit,
                "last_turn": self.last}  # fmt: skip
