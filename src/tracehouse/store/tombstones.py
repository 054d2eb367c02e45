"""The SQL of deleting sessions and letting them back, and the tombstones (both stores, one
transaction each); `upkeep/deletion.py` chooses the sessions.

A deleted session loses every row of it: turns, messages, tool calls, cited sources and its
history. Links other sessions held to it are cut (a call that spawned it no longer names it).
A tombstone stays, so that a later sync does not bring it back from a source that still has it;
restoring removes the tombstone and forgets the cursor of the file it came from, so the next
sync reads it again.

The SQL is written once here with `?` placeholders; each store runs it through a
`protocol.Tx`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import TOOL_CALLS
from tracehouse.store.protocol import Tx

# Children before parents: every row that names a session goes before the session row.
SESSION_ROWS = ("message_sources", "tool_calls", "messages", "turns", "threads",
                "session_history", "sessions")  # fmt: skip
_UNLINK_CHILDREN = (
    "UPDATE sessions SET parent_session_id = NULL, parent_message_id = NULL,"
    " spawn_tool_call_id = NULL, parent_source_session_id = NULL,"
    " parent_source_message_id = NULL, spawn_source_tool_call_id = NULL"
    " WHERE parent_session_id IN ({ids}) AND session_id NOT IN ({ids})"
)


def delete_in(tx: Tx, session_ids: Sequence[str], deleted_at: str) -> dict[str, int]:
    """Delete `session_ids` with all their rows; returns the rows deleted per table."""
    ids = list(session_ids)
    marks = ", ".join("?" * len(ids))
    tx.execute(
        "INSERT INTO session_tombstones (session_id, source_provider, source_session_id, label,"
        " source_path, deleted_at) SELECT session_id, source_provider, source_session_id, label,"
        f" source_path, ? FROM sessions WHERE session_id IN ({marks})"
        " ON CONFLICT (session_id) DO NOTHING",
        [deleted_at, *ids],
    )
    tx.execute(_UNLINK_CHILDREN.format(ids=marks), [*ids, *ids])
    _unlink_spawning_calls(tx, ids, marks)
    return {table: tx.delete_rows(table, f"session_id IN ({marks})", ids) for table in SESSION_ROWS}


def _unlink_spawning_calls(tx: Tx, ids: list[str], marks: str) -> None:
    """Calls of other sessions that spawned a deleted one stop naming it. Such a link is part
    of the call's content when its source wrote it, so the call's fingerprint is taken again:
    `store verify` finds the row sound, and the parent's next change rewrites it."""
    calls = tx.query(
        f"SELECT * FROM tool_calls WHERE spawned_session_id IN ({marks})"
        f" AND session_id NOT IN ({marks})",
        [*ids, *ids],
    )
    for call in calls:
        unlinked = {**call, "spawned_session_id": None, "spawned_source_session_id": None}
        tx.execute(
            "UPDATE tool_calls SET spawned_session_id = NULL, spawned_source_session_id = NULL,"
            " fingerprint = ? WHERE tool_call_id = ?",
            [row_fingerprint(TOOL_CALLS, unlinked), call["tool_call_id"]],
        )


def restore_in(tx: Tx, session_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Remove the tombstones of `session_ids` and forget the cursors of the files they came
    from; returns the tombstones removed."""
    ids = list(session_ids)
    marks = ", ".join("?" * len(ids))
    stones = tx.query(f"SELECT * FROM session_tombstones WHERE session_id IN ({marks})", ids)
    tx.execute(f"DELETE FROM session_tombstones WHERE session_id IN ({marks})", ids)
    for stone in stones:
        if stone["source_path"]:
            tx.execute(
                "DELETE FROM watermarks WHERE source_provider = ? AND unit_key = ?",
                [stone["source_provider"], stone["source_path"]],
            )
    return stones
