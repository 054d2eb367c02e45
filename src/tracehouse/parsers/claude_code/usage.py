"""Usage counted once per API response, into the turn open when its lines are read.

Claude Code writes a response as several lines, one per content block, each with the usage so
far (up to 1.0.x a partial count that grows; from 2.0.37 the final one repeated): the largest
usage seen per (`message.id`, `requestId`) is the response's, `<synthetic>` counts zero. The
(bounded) map of counted responses travels in the resume state, so a response split across an
append is not counted twice.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from tracehouse.model.rows import add_tokens
from tracehouse.parsers.claude_code.records import usage_tuple

KEPT = 512  # responses remembered across appends
COLUMNS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens",
           "reasoning_tokens")  # the order of `records.usage_tuple`  # fmt: skip


class Responses:
    def __init__(self, state: list[Any]) -> None:
        self.counted: OrderedDict[str, list[int]] = OrderedDict(state)

    def count(self, turn: dict[str, Any] | None, key: str, usage: Any, synthetic: bool) -> None:
        """A line's usage for response `key`: what it adds to what its response's lines counted
        before goes to `turn` (none open: remembered only)."""
        new = [0, 0, 0, 0, 0] if synthetic else list(usage_tuple(usage))
        old = self.counted.pop(key, None)  # popped and set again: the newest key is last
        if old is not None and sum(new[:4]) <= sum(old[:4]):
            self.counted[key] = old
            return
        self.counted[key] = new
        if turn is None:
            return
        delta = new if old is None else [n - o for n, o in zip(new, old, strict=True)]
        add_tokens(turn, zip(COLUMNS, delta, strict=True))
        if turn["input_tokens"] is not None:  # the input holds the cache (the ledger's rule)
            turn["total_tokens"] = turn["input_tokens"] + turn["output_tokens"]

    def to_state(self) -> list[Any]:
        return list(self.counted.items())[-KEPT:]
