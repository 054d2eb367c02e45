"""What the store works out about a session when it stores it: a label unique in the ledger
(with the aliases that keep every label ever shown resolving), and its threads.

A label is the short handle people type (`cc-6a963594`). Two sessions whose labels collide each
get a longer one, from more of their source id (`cc-6a963594ab`) or, for a label a producer
chose, a piece of their id (`checkout-flake-3f2a`). The label a session was shown under before
becomes an alias of it, so a shared link or a note never breaks. The store owns the label once
a session is stored: a re-import does not change it.
"""

from __future__ import annotations

import functools
from typing import Any

import xxhash

from tracehouse.model import ids
from tracehouse.model.tables import THREADS
from tracehouse.model.threads import session_threads, thread_rows
from tracehouse.store.protocol import Tx

_LONGEST = 32


def claim_label(tx: Tx, session: dict[str, Any], now: str) -> str:
    """Give a newly stored session a label no other session has; returns it.

    The sessions whose labels grew from the same short label form a group. Every member gets
    its k-th longer label, k the smallest that tells them all apart (none for a group of one),
    and every shorter label of every member is an alias, of the earliest-created member that
    had it: both a function of which sessions the ledger holds, not of the order they came in
    (nor of how a sync cut them into batches). Every label a member was shown under before is
    one of those, so it keeps resolving.

    That rule holds among the sessions of one machine. A session of another machine (a push to
    a team ledger) never renames, re-points or shadows what a label already names: its
    `createdAtMs` and its id are its own to choose, so it takes the first of its longer labels
    that nobody holds, and the labels already shown keep pointing where they pointed."""
    label = str(session["label"])
    host = _host(tx, session["session_id"])
    group = tx.query(
        "SELECT session_id, label, source_provider, source_session_id, created_at, host"
        " FROM sessions WHERE label_base = ? AND session_id != ?",
        [label, session["session_id"]],
    )
    named = _owners(tx, [label]).get(label)  # (session, machine) of an alias by that name
    if (any(member["host"] != host for member in group) or _held_elsewhere(tx, session)
            or (named is not None and named[1] != host)):  # fmt: skip
        return _deferred(tx, session, label)
    if not group and named is None:
        return label
    members = [*group, session]
    chosen = _joined(group, session, label) or _spread(members, label)
    for member, new in zip(members, chosen, strict=True):
        if new != member["label"]:
            tx.execute("UPDATE sessions SET label = ? WHERE session_id = ?",
                       [new, member["session_id"]])  # fmt: skip
    aliases = _aliases(members, chosen, label)
    stored = _owners(tx, list(aliases))
    for alias, owner in aliases.items():
        if alias in stored and stored[alias][0] == owner:
            continue  # the upsert would change nothing: a group of n makes n aliases each time
        if alias in stored and stored[alias][1] != host:
            continue  # another machine's: it keeps pointing where it pointed
        tx.execute(
            "INSERT INTO session_aliases (alias, session_id, created_at) VALUES (?, ?, ?)"
            " ON CONFLICT (alias) DO UPDATE SET session_id = excluded.session_id"
            " WHERE session_aliases.session_id != excluded.session_id",
            [alias, owner, now],
        )
    return chosen[-1]


def _host(tx: Tx, session_id: str) -> Any:
    found = tx.query("SELECT host FROM sessions WHERE session_id = ?", [session_id])
    return found[0]["host"] if found else None


def _held_elsewhere(tx: Tx, session: dict[str, Any]) -> bool:
    """Whether the session's label is already the label of a session outside its group: one
    whose label grew to it, or a hint that named it."""
    label = str(session["label"])
    return bool(tx.query(
        "SELECT 1 FROM sessions WHERE label = ? AND label_base != ? AND session_id != ?",
        [label, label, session["session_id"]],
    ))  # fmt: skip


def _deferred(tx: Tx, session: dict[str, Any], label: str) -> str:
    """The first of the session's longer labels that is neither a label nor an alias; nothing
    else changes."""
    options = [*_longer(session, label), f"{label}-{session['session_id'].split('_', 1)[-1]}"]
    for option in options:
        if not tx.query(
            "SELECT 1 FROM sessions WHERE label = ? AND session_id != ?"
            " UNION ALL SELECT 1 FROM session_aliases WHERE alias = ?",
            [option, session["session_id"], option],
        ):
            new = option
            break
    else:  # pragma: no cover - the whole id is unique
        new = options[-1]
    tx.execute("UPDATE sessions SET label = ? WHERE session_id = ?", [new, session["session_id"]])
    return new


def _owners(tx: Tx, aliases: list[str]) -> dict[str, tuple[str, Any]]:
    """alias → (session id, its machine), of those of `aliases` the ledger holds."""
    found: dict[str, tuple[str, Any]] = {}
    for start in range(0, len(aliases), 500):
        chunk = aliases[start : start + 500]
        for alias, owner, host in tx.rows(
            "SELECT a.alias, a.session_id, s.host FROM session_aliases AS a"
            " LEFT JOIN sessions AS s ON s.session_id = a.session_id"
            f" WHERE a.alias IN ({', '.join('?' * len(chunk))})",
            chunk,
        ):
            found[alias] = (owner, host)
    return found


def _aliases(members: list[dict[str, Any]], chosen: list[str], label: str) -> dict[str, str]:
    """alias → session id: each member's labels shorter than its chosen one (the short label
    first), each owned by the earliest-created member that has it (then the smallest id)."""
    holders: dict[str, list[dict[str, Any]]] = {}
    for member, new in zip(members, chosen, strict=True):
        options = [label, *_longer(member, label)]
        if new not in options:
            continue  # a whole-id label: every shorter one is shared, and owned below
        for shorter in options[: options.index(new)]:
            holders.setdefault(shorter, []).append(member)
    taken = set(chosen)
    return {
        alias: min(found, key=lambda m: (m.get("created_at") or "", str(m["session_id"])))[
            "session_id"
        ]
        for alias, found in holders.items()
        if alias not in taken
    }


def _joined(group: list[dict[str, Any]], session: dict[str, Any], label: str) -> list[str] | None:
    """The labels when the group already tells its members apart at some k and the new
    session's k-th label is free: the others keep theirs (a smaller k, which failed for fewer
    members, fails for more). None when the group must grow its labels."""
    if len(group) < 2:
        return None  # a group of one still holds the short label
    options = _longer(group[0], label)
    if group[0]["label"] not in options:
        return None  # labels split by an older rule (a migration): lay them out again
    k = options.index(group[0]["label"])
    mine = _longer(session, label)
    if not mine:
        return None
    candidate = mine[min(k, len(mine) - 1)]
    if candidate in {m["label"] for m in group}:
        return None
    return [*(m["label"] for m in group), candidate]


def _spread(members: list[dict[str, Any]], label: str) -> list[str]:
    """Each member's k-th longer label, for the smallest k at which they all differ."""
    options = [_longer(m, label) for m in members]
    for k in range(max(len(o) for o in options)):
        picked = [o[min(k, len(o) - 1)] for o in options]
        if len(set(picked)) == len(picked):
            return picked
    return [f"{label}-{m['session_id'].split('_', 1)[-1]}" for m in members]  # whole ids


def _longer(session: dict[str, Any], label: str) -> tuple[str, ...]:
    """Longer labels for `session`, shortest first: more of its source id where the label was
    made from it, else a growing piece of a hash of its id."""
    provider, source_id = session["source_provider"], session["source_session_id"]
    return _longer_of(provider, source_id, str(session["session_id"]), label)


# Every session stored into a group works out the longer labels of every member again, so a
# group that grows to n sessions costs n²/2 of them: 312 Aider sessions of one day made them a
# fifth of a backfill's writer. Each is a function of the four strings, so each is worked out
# once a process.
@functools.lru_cache(maxsize=8192)
def _longer_of(provider: str, source_id: str, session_id: str, label: str) -> tuple[str, ...]:
    out = []
    prefix, head, from_end = ids.label_parts(provider, source_id)
    if label == ids.session_label(provider, source_id):
        out += [f"{prefix}-{head[-n:] if from_end else head[:n]}"
                for n in range(10, _LONGEST + 1, 2)]  # fmt: skip
    digest = xxhash.xxh3_64_hexdigest(session_id.encode())
    out += [f"{label}-{digest[:n]}" for n in (4, 6, 8, 12, 16)]
    return tuple(c for c in dict.fromkeys(out) if c != label)


_UPSERT_THREAD = (
    f"INSERT INTO threads VALUES ({', '.join('?' * len(THREADS.names))})"
    f" ON CONFLICT (thread_id) DO UPDATE SET"
    f" {', '.join(f'{n} = excluded.{n}' for n in THREADS.names[1:])}"
)


def rewrite_threads(tx: Tx, session_id: str) -> None:
    """The session's `threads` rows, worked out again from its turns as they now stand.

    Only the rows that changed are written: a live sync stores a session again at every
    append, and rewriting all of a long session's threads each time made every append cost more
    than the one before."""
    turns = tx.rows(
        "SELECT turn_id, parent_turn_id, seq FROM turns WHERE session_id = ?", [session_id]
    )
    rows = thread_rows(session_id, *session_threads(session_id, turns))
    stored = {
        row[0]: row
        for row in tx.rows(
            f"SELECT {', '.join(THREADS.names)} FROM threads WHERE session_id = ?", [session_id]
        )
    }
    for thread_id in sorted(stored.keys() - {row[0] for row in rows}):
        tx.execute("DELETE FROM threads WHERE thread_id = ?", [thread_id])
    for row in rows:
        if stored.get(row[0]) != row:  # a stored bool may read back as 0/1: equal all the same
            tx.execute(_UPSERT_THREAD, list(row))
