"""`sessions delete` and `sessions restore`: the sessions a user names, with their subagents,
deleted from the ledger or let back, each in one transaction of the store's
(`store/tombstones.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracehouse.model.contract import now_iso
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import find_session, labels_of, session_family


class HasSubagents(ValueError):
    """Deleting a session would leave its subagents without it: say so, or delete them too."""


def delete_sessions(
    store: SessionStore, refs: Sequence[str], *, with_subagents: bool = False
) -> list[dict[str, Any]]:
    """Delete the sessions `refs` name (labels, ids, source ids), and with `with_subagents`
    every subagent below them; returns the sessions deleted (label, session id, provider)."""
    chosen = [find_session(store, ref)["session_id"] for ref in refs]
    family = list(dict.fromkeys(sid for ref in chosen for sid in session_family(store, ref)))
    below = [sid for sid in family if sid not in chosen]
    if below and not with_subagents:
        labels = ", ".join(sorted(labels_of(store, below).values()))
        raise HasSubagents(f"{len(below)} subagent(s) below: {labels}")
    gone = store.query(
        "SELECT session_id, label, source_provider FROM sessions"
        f" WHERE session_id IN ({', '.join('?' * len(family))}) ORDER BY label",
        family,
    )
    store.delete_sessions(family, now_iso())
    return gone


def restore_sessions(store: SessionStore, refs: Sequence[str]) -> list[dict[str, Any]]:
    """Let deleted sessions back: by label, session id or source id, as they were shown."""
    ids: list[str] = []
    for ref in refs:
        rows = store.query(
            "SELECT session_id FROM session_tombstones WHERE label = ? OR session_id = ?"
            " OR source_session_id = ?",
            [ref, ref, ref],
        )
        if not rows:
            raise LookupError(f"{ref!r}: no deleted session by that name")
        ids.extend(r["session_id"] for r in rows)
    return store.restore_sessions(list(dict.fromkeys(ids)))
