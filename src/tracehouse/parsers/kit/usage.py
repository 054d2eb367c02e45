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
        def get(name: str) -> int:
            return count(record.get(name), name) if name else 0

        return ledger_counts(
            input=get(self.input),
            output=get(self.output),
            cache_read=get(self.cache_read),
            cache_write=get(self.cache_write),
            reasoning=get(self.reasoning),
            input_holds_cache=self.input_holds_cache,
            output_holds_reasoning=self.output_holds_reasoning,
        )


def dollars(value: Any) -> float | None:
    """A cost as a source wrote it: a number, else none."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
