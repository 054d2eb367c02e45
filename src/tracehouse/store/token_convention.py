"""Every provider's tokens in the ledger's one convention (schema 19 / migration 0018).

The schema always said input holds the cached tokens, output holds the reasoning and total is
input + output (`model/tokens.py`), but three parsers stored what their provider reported:
Claude Code's input without its cache reads and writes (and a total that added them), OpenCode's
input without the cache and output without the reasoning, Gemini CLI's output without the
thoughts (and an input without the tool-use prompt, which its total held). Parsers now convert;
a ledger written before is brought to the same figures without reading any source again (it may
be gone), from the columns it kept:

- claude-code: input += cache reads + cache writes;
- opencode: input += cache reads + cache writes, output += reasoning;
- gemini-cli: output += thoughts, and input = Gemini's total − that output (the total held the
  tool-use prompt the input lacked);
- then total = input + output, on turns and sessions alike, and each turn's fingerprint taken
  again (`store verify` holds): the figures a fresh import gives.

Codex, Cursor and the Cursor agent were already in the convention and are left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import TOKEN_COLUMNS, TURNS

CONVERTED = ("claude-code", "opencode", "gemini-cli")


def converted(provider: str, row: dict[str, Any]) -> dict[str, Any]:
    """One turn's (or session's) counts in the convention, from what the old parser stored."""
    inp, out = row.get("input_tokens"), row.get("output_tokens")
    if inp is None and out is None:
        return row
    cached = row.get("cached_input_tokens") or 0
    written = row.get("cache_write_tokens") or 0
    reasoning = row.get("reasoning_tokens") or 0
    new = dict(row)
    if provider in ("claude-code", "opencode") and inp is not None:
        new["input_tokens"] = inp + cached + written
    if provider in ("opencode", "gemini-cli") and out is not None:
        new["output_tokens"] = out + reasoning
    if provider == "gemini-cli" and row.get("total_tokens") is not None and out is not None:
        new["input_tokens"] = max(row["total_tokens"] - new["output_tokens"], inp or 0)
    if new["input_tokens"] is not None or new["output_tokens"] is not None:
        new["total_tokens"] = (new["input_tokens"] or 0) + (new["output_tokens"] or 0)
    return new


def to_convention(
    query: Callable[[str, Sequence[Any]], Sequence[Sequence[Any]]],
    execute_many: Callable[[str, list[tuple[Any, ...]]], object],
    mark: str,
) -> int:
    """Apply the conversion through a backend's own calls (`mark`: its parameter marker, ? or
    %s); returns the turns that changed."""
    changed = 0
    for provider in CONVERTED:
        turns = [dict(zip(TURNS.names, values, strict=True)) for values in query(
            f"SELECT {', '.join(f't.{n}' for n in TURNS.names)} FROM turns t JOIN sessions s"
            f" ON s.session_id = t.session_id WHERE s.source_provider = {mark}", [provider]
        )]  # fmt: skip
        updates = []
        for turn in map(lambda row: converted(provider, row), turns):
            counts = tuple(turn[c] for c in TOKEN_COLUMNS)
            updates.append((*counts, row_fingerprint(TURNS, turn), turn["turn_id"]))
        _update(execute_many, "turns", "turn_id", (*TOKEN_COLUMNS, "fingerprint"), updates, mark)
        changed += len(updates)
        columns = ("session_id", *TOKEN_COLUMNS)
        sessions = query(
            f"SELECT {', '.join(columns)} FROM sessions WHERE source_provider = {mark}", [provider]
        )
        updates = []
        for values in sessions:
            row = converted(provider, dict(zip(columns, values, strict=True)))
            updates.append((*(row[c] for c in TOKEN_COLUMNS), row["session_id"]))
        _update(execute_many, "sessions", "session_id", TOKEN_COLUMNS, updates, mark)
    return changed


def _update(
    execute_many: Callable[[str, list[tuple[Any, ...]]], object],
    table: str,
    key: str,
    columns: Sequence[str],
    rows: list[tuple[Any, ...]],
    mark: str,
) -> None:
    if rows:
        sets = ", ".join(f"{c} = {mark}" for c in columns)
        execute_many(f"UPDATE {table} SET {sets} WHERE {key} = {mark}", rows)
