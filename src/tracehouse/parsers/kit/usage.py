"""A source's usage record into the ledger's token convention, said once as a declaration:
which field holds each count, and whether its input holds the cache and its output the
reasoning (`model/tokens.ledger_counts`). A count that cannot be one names its field."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tracehouse.model.fields import count
from tracehouse.model.tokens import ledger_counts


@dataclass(frozen=True)
class Usage:
    input: str
    output: str
    cache_read: str = ""
    cache_write: str = ""
    reasoning: str = ""
    input_holds_cache: bool = False
    output_holds_reasoning: bool = True

    def counts(self, record: Mapping[str, Any]) -> dict[str, int]:
        """The ledger's columns; reasoning left out where the source names no field for it or
        the record holds none (Pi 0.73 and Kimi spend reasoning tokens their logs do not
        count): the ledger's NULL is "not recorded", never 0."""

        def get(name: str) -> int:
            return count(record.get(name), name) if name else 0

        reasoning = record.get(self.reasoning) if self.reasoning else None
        counts = ledger_counts(
            input=get(self.input),
            output=get(self.output),
            cache_read=get(self.cache_read),
            cache_write=get(self.cache_write),
            reasoning=0 if reasoning is None else count(reasoning, self.reasoning),
            input_holds_cache=self.input_holds_cache,
            output_holds_reasoning=self.output_holds_reasoning,
        )
        if reasoning is None:
            del counts["reasoning_tokens"]
        return counts


def dollars(value: Any) -> float | None:
    """A cost as a source wrote it: a number, else none."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
