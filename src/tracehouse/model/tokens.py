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
price (what a price table's input rate applies to).
"""

from __future__ import annotations

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
