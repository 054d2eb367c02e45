"""Turns and the usage counted in them: a prompt through its final response.

A turn opens at a typed prompt and stays open until the next one. Usage is counted once per API
response: the largest usage seen per (`message.id`, `requestId`), `<synthetic>` as zero; the
(bounded) map of counted responses travels in the resume state, so a split message that crosses
an append boundary is not counted twice.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from tracehouse.model import ids
from tracehouse.model.rows import TableBuffer, add_tokens
from tracehouse.model.tables import TURNS
from tracehouse.parsers.claude_code.records import usage_tuple

PROVIDER = "claude-code"
USAGE_KEYS = 512  # (message.id, requestId) pairs remembered across appends
TOKEN_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


class Turns:
    def __init__(self, session_id: str, source_session_id: str, state: dict[str, Any]) -> None:
        self.session_id = session_id
        self.sid = source_session_id
        self.current: dict[str, Any] | None = state.get("turn")
        self.seq: int = state.get("turn_seq", 0)
        self.usage: OrderedDict[str, list[int]] = OrderedDict(state.get("usage", []))
        self.rows = TableBuffer(TURNS)

    def start(
        self, key: str, ts: str | None, *, parent: str | None = None, implicit: bool = False
    ) -> None:
        self.close()
        self.current = {
            "turn_id": ids.turn_id(PROVIDER, self.sid, key),
            "session_id": self.session_id,
            "source_turn_id": key,
            "parent_turn_id": parent,
            "seq": self.seq,
            "started_at": ts,
            "completed_at": ts,
            "model": None,
            "llm_provider": None,
            **dict.fromkeys(TOKEN_COLUMNS),
            "status": "completed",
            "response_message_id": None,
            "query_message_ids": [],
            "metadata": {"implicit": True} if implicit else {},
        }
        self.seq += 1

    def ensure(self, key: str, ts: str | None, parent: str | None = None) -> bool:
        """Output before any prompt (a warm-up agent, a resumed tail) still belongs to a turn."""
        if self.current is not None:
            return False
        self.start(key, ts, parent=parent, implicit=True)
        return True

    def close(self) -> None:
        if self.current is not None:
            self.emit()
            self.current = None

    def emit(self) -> None:
        assert self.current is not None
        turn = dict(self.current)
        turn["llm_provider"] = llm_provider(turn.get("model"))
        counted = [turn[c] for c in TOKEN_COLUMNS[:2] if turn[c] is not None]
        turn["total_tokens"] = sum(counted) if counted else None  # input holds the cache
        self.rows.add(turn)

    def count_usage(
        self, key: str, request_id: Any, usage: Any, synthetic: bool
    ) -> list[int] | None:
        """Add a response's usage to the open turn, once; returns what was added."""
        new = [0, 0, 0, 0, 0] if synthetic else list(usage_tuple(usage))
        ukey = f"{key}|{request_id or ''}"
        old = self.usage.pop(ukey, None)  # popped and set again: the newest key is last
        if old is not None and sum(new[:4]) <= sum(old[:4]):
            self.usage[ukey] = old
            return None
        self.usage[ukey] = new
        current = self.current
        if current is None:
            return None
        delta = list(new) if old is None else [n - o for n, o in zip(new, old, strict=True)]
        add_tokens(current, zip(TOKEN_COLUMNS, delta, strict=True))
        return delta

    def to_state(self) -> dict[str, Any]:
        return {
            "turn": self.current,
            "turn_seq": self.seq,
            "usage": list(self.usage.items())[-USAGE_KEYS:],
            "usage_input": "with cache",
        }


def with_cache_input(state: dict[str, Any]) -> dict[str, Any]:
    """A resume state saved before the ledger's token convention (no `usage_input`) kept
    Anthropic's input, without the cache: its counted responses, its open turn and its
    session totals are brought to the convention, so an append adds like to like."""
    if not state or state.get("usage_input") == "with cache":
        return state
    state = dict(state)
    state["usage"] = [(k, [v[0] + v[2] + v[3], *v[1:]]) for k, v in state.get("usage", [])]
    turn = state.get("turn")
    if turn and turn.get("input_tokens") is not None:
        extra = (turn.get("cached_input_tokens") or 0) + (turn.get("cache_write_tokens") or 0)
        state["turn"] = {**turn, "input_tokens": turn["input_tokens"] + extra}
    session = state.get("session")
    if session and session.get("tokens"):
        inp, out, read, write, thinking = session["tokens"]
        state["session"] = {**session, "tokens": [inp + read + write, out, read, write, thinking]}
    return state


def llm_provider(model: str | None) -> str | None:
    if not model:
        return None
    return "anthropic" if model.startswith("claude") else None
