"""Who may write what through the gateway (issue #38).

A push token is bound to one machine: it writes as that machine, and a request that names
another in `X-Tracehouse-Machine` is refused. A session belongs to the machine that first stored
it (its `host`): an item of another machine that names it, or that carries a row stored under
another session (a message id, a turn id, a tool call id), is refused alone, with the reason,
and nothing of the owner's changes. Runs and idempotency keys are kept per token, so one token
can neither close another's run nor replay its stored response. An admin moves sessions between
machines when a laptop is replaced (`move_sessions`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fastapi import HTTPException

from tracehouse.errors import ConfigError
from tracehouse.gateway.tokens import Grant
from tracehouse.model.contract import ImportBatch, ItemResult
from tracehouse.model.tables import CONTENT_TABLES
from tracehouse.store.protocol import SessionStore, Tx

CHUNK = 500


def machine_of(grant: Grant, header: str | None) -> str:
    """The machine a push request writes as: its token's; a header naming another is refused."""
    if grant.machine is None:
        raise HTTPException(
            403,
            f"token {grant.name!r} is bound to no machine: issue it again with"
            " `tracehouse serve tokens add NAME --scope push --machine MACHINE`",
        )
    if header is not None and header != grant.machine:
        raise HTTPException(
            403, f"token {grant.name!r} writes as machine {grant.machine!r}, not {header!r}"
        )
    return grant.machine


def scoped_run(machine: str, run_id: str) -> str:
    """A pusher's run as the gateway keeps it: under its machine, so no other can close it."""
    return f"{machine}/{run_id}"


def scoped_key(grant: Grant, key: str | None) -> str | None:
    """An idempotency key as the gateway keeps it: per token, so no other can replay it."""
    return None if key is None else f"{grant.name}\x1f{key}"


def foreign(store: SessionStore, batch: ImportBatch, machine: str) -> dict[str, str]:
    """Session id → why its item may not be written by `machine`."""
    refused: dict[str, str] = {}
    ids = [item.session_id for item in batch.items]
    for row in _lookup(store, "sessions", "session_id", "host", ids):
        if row["owner"] != machine:
            refused[row["id"]] = (
                f"session belongs to machine {row['owner']!r}; an admin can move it"
                " (tracehouse serve sessions move)"
            )
    for table in CONTENT_TABLES.values():
        names = table.names
        key, session = names.index(table.primary_key[0]), names.index("session_id")
        wanted = {r[key]: r[session] for r in batch.tuples(table.name) if r[session] not in refused}
        column = table.primary_key[0]
        for row in _lookup(store, table.name, column, "session_id", list(wanted)):
            if row["owner"] != wanted[row["id"]]:
                refused.setdefault(
                    wanted[row["id"]], f"{column} {row['id']} is a row of another session"
                )
    return refused


def _lookup(
    store: SessionStore, table: str, column: str, owner: str, ids: list[Any]
) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT {column} AS id, {owner} AS owner FROM {table} WHERE {column} IN ({marks})"
        found.extend(store.query(sql, chunk))
    return found


def without(batch: ImportBatch, refused: dict[str, str]) -> ImportBatch:
    """The batch less the refused items and their rows; each is a failed result at its place
    in the request."""
    if not refused:
        return batch
    invalid = set(batch.invalid_at)
    places = [i for i in range(len(batch.items) + len(invalid)) if i not in invalid]
    kept, failed, failed_at = [], list(batch.invalid), list(batch.invalid_at)
    for place, item in zip(places, batch.items, strict=True):
        reason = refused.get(item.session_id)
        if reason is None:
            kept.append(item)
            continue
        failed.append(ItemResult(item.source_provider, item.source_session_id, None, "failed",
                                 f"refused: {reason}"))  # fmt: skip
        failed_at.append(place)
    rows = {}
    for table in CONTENT_TABLES.values():
        session = table.names.index("session_id")
        found = [r for r in batch.tuples(table.name) if r[session] not in refused]
        if found:
            rows[table.name] = found
    return replace(batch, items=tuple(kept), rows=rows, frames={}, invalid=tuple(failed),
                   invalid_at=tuple(failed_at))  # fmt: skip


def move_sessions(store: SessionStore, source: str, target: str) -> int:
    """Give every session of machine `source` to machine `target` (a laptop replaced): the
    sessions and the cursors its pushes kept. Returns how many sessions moved."""
    if source == target:
        raise ConfigError("--from and --to name the same machine")

    def move(tx: Tx) -> int:
        moved = tx.execute("UPDATE sessions SET host = ? WHERE host = ?", [target, source])
        prefix, new = f"{source}:", f"{target}:"
        tx.execute(
            "UPDATE watermarks SET unit_key = ? || substr(unit_key, ?) WHERE substr(unit_key, 1, ?)"
            " = ? AND NOT EXISTS (SELECT 1 FROM watermarks AS w WHERE w.source_provider ="
            " watermarks.source_provider AND w.unit_key = ? || substr(watermarks.unit_key, ?))",
            [new, len(prefix) + 1, len(prefix), prefix, new, len(prefix) + 1],
        )
        return moved

    return store.write(move)
