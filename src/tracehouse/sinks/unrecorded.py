"""Token counts no agent recorded are NULL in the ledger, never 0 (schema 17 / migration 0016).

Before, a turn started at 0 and a source that records no tokens (the Cursor agent, most Cursor
composers, a turn interrupted before any reply) stored `0 in, 0 out`, indistinguishable from a
real zero. Parsers now leave such counts NULL (`model/rows.add_tokens`: counts that are all zero
record nothing). A ledger written before is brought to the same figures without reading any
source again (it may be gone): a turn whose six counts are all 0 becomes NULL, with its
fingerprint taken again so `store verify` still holds, and a session whose totals are all 0
takes its turns' sums, NULL where none recorded a count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import SESSIONS, TOKEN_COLUMNS, TURNS

_ALL_ZERO = " AND ".join(f"{c} = 0" for c in TOKEN_COLUMNS)


def null_unrecorded(
    query: Callable[[str], Sequence[Sequence[Any]]],
    execute_many: Callable[[str, list[tuple[Any, ...]]], object],
    execute: Callable[[str], object],
    mark: str,
) -> int:
    """Apply the rule through a backend's own calls (`mark`: its parameter marker, ? or %s);
    returns the turns that changed."""
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
    return len(updates)
