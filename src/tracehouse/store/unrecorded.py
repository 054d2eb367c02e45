"""Counts and times no agent recorded are NULL in the ledger, never 0 or a file's time (schema
17 / migration 0016).

Before, a turn started at 0 and a source that records no tokens (the Cursor agent, most Cursor
composers, a turn interrupted before any reply) stored `0 in, 0 out`, indistinguishable from a
real zero. Parsers now leave such counts NULL (`model/rows.add_tokens`: counts that are all zero
record nothing). A ledger written before is brought to the same figures without reading any
source again (it may be gone): a turn whose six counts are all 0 becomes NULL, with its
fingerprint taken again so `store verify` still holds, and a session whose totals are all 0
takes its turns' sums, NULL where none recorded a count. A Cursor agent transcript (it records
no time: its session has no `created_at`) loses the file modification time it took as its end,
and is flagged as a fresh import flags it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from tracehouse.model.rows import json_text, row_fingerprint
from tracehouse.model.tables import SESSIONS, TOKEN_COLUMNS, TURNS

_ALL_ZERO = " AND ".join(f"{c} = 0" for c in TOKEN_COLUMNS)


def null_unrecorded(
    query: Callable[[str], Sequence[Sequence[Any]]],
    execute_many: Callable[[str, list[tuple[Any, ...]]], object],
    execute: Callable[[str], object],
    mark: str,
    json_mark: str,
) -> int:
    """Apply the rule through a backend's own calls (`mark`: its parameter marker, ? or %s;
    `json_mark`: the same for a JSON column); returns the turns that changed."""
    names = TURNS.names
    updates = []
    for values in query(f"SELECT {', '.join(names)} FROM turns WHERE {_ALL_ZERO}"):
        row = {**dict(zip(names, values, strict=True)), **dict.fromkeys(TOKEN_COLUMNS)}
        updates.append((row_fingerprint(TURNS, row), row["turn_id"]))
    if updates:
        cleared = ", ".join(f"{c} = NULL" for c in TOKEN_COLUMNS)
        execute_many(
            f"UPDATE turns SET {cleared}, fingerprint = {mark} WHERE turn_id = {mark}", updates
        )
    sums = ", ".join(
        f"{c} = (SELECT sum(t.{c}) FROM turns t WHERE t.session_id = {SESSIONS.name}.session_id)"
        for c in TOKEN_COLUMNS
    )
    execute(f"UPDATE {SESSIONS.name} SET {sums} WHERE {_ALL_ZERO}")
    untimed = query(
        "SELECT session_id, metadata FROM sessions WHERE source_provider = 'cursor-agent'"
        " AND created_at IS NULL AND updated_at IS NOT NULL"
    )
    if untimed:
        execute_many(
            f"UPDATE sessions SET updated_at = NULL, metadata = {json_mark}"
            f" WHERE session_id = {mark}",
            [(_flagged(metadata), session_id) for session_id, metadata in untimed],
        )
    return len(updates)


def _flagged(metadata: Any) -> str | None:
    """The session's metadata (JSON text or, from PostgreSQL, decoded) with the parser's flag."""
    found = orjson.loads(metadata) if isinstance(metadata, str) else dict(metadata or {})
    return json_text({**found, "times": "none recorded"})
