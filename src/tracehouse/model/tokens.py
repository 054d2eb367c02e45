"""The ledger's one token convention (docs/schema.md), and each provider's way into it.

Providers split a call's tokens differently: Anthropic's `input_tokens` leave out the cache
reads and writes, OpenAI's and Gemini's prompt counts hold the cache reads; Gemini and OpenCode
count reasoning apart from the output, OpenAI and Anthropic inside it. The ledger holds one
meaning for every provider, so a session's figures, a usage report and an export agree:

- `input_tokens`: every prompt token, the cache reads and writes included;
- `output_tokens`: every completion token, reasoning included;
- `cached_input_tokens`, `cache_write_tokens`, `reasoning_tokens`: the parts, shown apart;
- `total_tokens`: input + output.

Parsers convert with `ledger_counts`; `fresh_input` is the part of the input billed at the full
price (what a price table's input rate applies to). `Tokens` is a turn's (or a sum of turns')
counts as the reports add and price them, `tokens_of` a ledger row's.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs `usage`'s quick path more than its report (`reports/`)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def ledger_counts(
    *,
    input: int,
    output: int,
    cache_read: int = 0,
    cache_write: int = 0,
    reasoning: int = 0,
    input_holds_cache: bool,
    output_holds_reasoning: bool,
) -> dict[str, int]:
    """One call's tokens as the provider reported them → the ledger's six columns."""
    inp = input if input_holds_cache else input + cache_read + cache_write
    out = output if output_holds_reasoning else output + reasoning
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cached_input_tokens": cache_read,
        "cache_write_tokens": cache_write,
        "reasoning_tokens": reasoning,
        "total_tokens": inp + out,
    }


def fresh_input(row: Mapping[str, Any]) -> int | None:
    """The input neither read from nor written to the cache; None where no input was recorded.
    Never below 0, whatever a source's counts claim."""
    given = row.get("input_tokens")
    if given is None:
        return None
    cached = int(row.get("cached_input_tokens") or 0)
    written = int(row.get("cache_write_tokens") or 0)
    return max(int(given) - cached - written, 0)


class Tokens:
    """One model call's tokens (or a sum of them), in the ledger's convention: input holds the
    cache reads and writes, output the reasoning. A value: a sum is a new one.

    A class of its own rather than a dataclass: importing `dataclasses` (and `inspect` with it)
    took 30 ms of `tracehouse usage`'s quick path, which reads these and nothing heavier."""

    __slots__ = ("cache_read", "cache_write", "input", "output", "reasoning")

    def __init__(self, input: int = 0, output: int = 0, cache_read: int = 0,
                 cache_write: int = 0, reasoning: int = 0) -> None:  # fmt: skip
        self.input = input  # every prompt token
        self.output = output  # reasoning included
        self.cache_read = cache_read  # part of input
        self.cache_write = cache_write  # part of input
        self.reasoning = reasoning  # part of output, shown apart

    @property
    def fresh(self) -> int:
        """The input priced at the full input rate: neither read from nor written to a cache."""
        return max(self.input - self.cache_read - self.cache_write, 0)

    @property
    def total(self) -> int:
        return self.input + self.output

    def counts(self) -> tuple[int, int, int, int, int]:
        return (self.input, self.output, self.cache_read, self.cache_write, self.reasoning)

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.reasoning + other.reasoning,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokens) and self.counts() == other.counts()

    def __hash__(self) -> int:
        return hash(self.counts())

    def __repr__(self) -> str:
        named = ", ".join(f"{n}={v}" for n, v in zip(_NAMES, self.counts(), strict=True))
        return f"Tokens({named})"


_NAMES = ("input", "output", "cache_read", "cache_write", "reasoning")


def tokens_of(row: Mapping[str, Any]) -> Tokens:
    """A row's (or a sum's) counts, under the ledger's column names; a missing count is 0."""
    return Tokens(
        input=int(row["input_tokens"] or 0),
        output=int(row["output_tokens"] or 0),
        cache_read=int(row["cached_input_tokens"] or 0),
        cache_write=int(row["cache_write_tokens"] or 0),
        reasoning=int(row["reasoning_tokens"] or 0),
    )
