"""What every store decides about an import item before it writes (DESIGN §4), kept out of SQL.

The SQLite and PostgreSQL writers differ in how they move rows; what an item means — imported,
skipped, upserted, which provenance a session row carries — is decided here, once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import orjson

from tracehouse import __version__
from tracehouse.errors import IdempotencyConflict
from tracehouse.model.columns import Kind
from tracehouse.model.contract import (
    Clear,
    ImportItem,
    ImportResponse,
    Reject,
    WatermarkUpdate,
    now_iso,
    pushed_key,
)
from tracehouse.model.fingerprint import canonical_json
from tracehouse.model.ids import stable_id
from tracehouse.model.labels import reference
from tracehouse.model.rows import json_text
from tracehouse.model.tables import SESSIONS
from tracehouse.model.wire import iso_from_ms
from tracehouse.shown import command_line
from tracehouse.store.protocol import RunTotals

# A migration (`store copy`) carries a session's provenance from the store it was read from:
# when it was first seen, by which host, and whether its source file has since vanished.
MIGRATION = "migration"
PROVENANCE = ("host", "importer_version", "first_imported_at", "last_imported_at")
LINK_COLUMNS = ("parent_session_id", "parent_message_id", "spawn_tool_call_id",
                "parent_source_session_id", "parent_source_message_id",
                "spawn_source_tool_call_id")  # fmt: skip
# The store owns the label once a session is stored (`store/labels.py`).
INSERT_ONLY = ("first_imported_at", "label", "label_base")
_SESSION_JSON = [c.name for c in SESSIONS.columns if c.kind is Kind.JSON]

Action = Literal["write", "skip", "refresh", "keep", "deleted"]


@dataclass(frozen=True)
class Existing:
    """What a store already holds for a session, as far as the decision needs it."""

    fingerprint: str | None
    first_imported_at: str | None
    source_missing_at: str | None
    recovered: bool
    label: str | None = None  # as stored: the store owns it


def decide(item: ImportItem, existing: Existing | None, mode: str, deleted: bool = False) -> Action:
    """`write` the session's rows, `skip` it, `refresh` only its missing flag, `keep` the
    stored session because the item is a weaker copy of it, or leave out a `deleted` one."""
    if deleted:
        return "deleted"
    if existing is None:
        return "write"
    if recovered(item.session) and not existing.recovered:
        # Prompts recovered from a history file never replace the session their own
        # transcript gave: the ledger already holds more than they can.
        return "keep"
    if existing.fingerprint != item.fingerprint:
        return "write"
    if existing.source_missing_at != missing_at(item, mode):
        return "refresh"
    return "skip"


def missing_at(item: ImportItem, mode: str) -> str | None:
    """An import means the source is there; a migration copies the flag as it stands."""
    if mode == MIGRATION:
        value = item.session.get("source_missing_at")
        return None if value is None else str(value)
    return None


def written(item: ImportItem, existing: Existing | None, now: str) -> Existing:
    """What the store holds for the session once this item is written (for repeats in a batch)."""
    first = existing.first_imported_at if existing else now
    return Existing(item.fingerprint, first, None, recovered(item.session))


def session_values(
    item: ImportItem, existing: Existing | None, mode: str, host: str, now: str
) -> list[Any]:
    """The session row to upsert, in `SESSIONS` column order, JSON columns as text."""
    session = item.session
    row = dict(session)
    carried = mode == MIGRATION
    row.update(
        fingerprint=item.fingerprint,
        host=session.get("host") or host,
        importer_version=session.get("importer_version") or __version__,
        first_imported_at=(existing.first_imported_at if existing else None)
        or (session.get("first_imported_at") if carried else None)
        or now,
        last_imported_at=(session.get("last_imported_at") if carried else None) or now,
        source_missing_at=missing_at(item, mode),
        # the label it asked for: what its label grows from when another session's collides
        label_base=(session.get("label_base") if carried else None) or session.get("label"),
        source_read_at=(item.imported_at_ms and iso_from_ms(item.imported_at_ms))
        or session.get("source_read_at"),
    )
    for name in _SESSION_JSON:
        row[name] = json_text(row.get(name))
    return [row.get(n) for n in SESSIONS.names]


def supersedes(item: ImportItem, existing: Existing | None) -> bool:
    """The session's own transcript arrives after its prompts were recovered from a history:
    the recovered prompts and turns go, or the session would hold every prompt twice (the
    history read before the transcript existed; DESIGN: any order gives the same ledger)."""
    return existing is not None and existing.recovered and not recovered(item.session)


# The rows a recovered session holds that its transcript replaces, per table.
RECOVERED_ROWS = ("messages", "turns")


def recovered(session: Mapping[str, Any]) -> bool:
    """A session rebuilt from a secondary record (a prompt history), not from its transcript."""
    metadata = session.get("metadata")
    if isinstance(metadata, str):
        return '"recovered_from"' in metadata
    return isinstance(metadata, dict) and bool(metadata.get("recovered_from"))


def unit_cursors_to_save(
    watermarks: Iterable[WatermarkUpdate], failed: Iterable[ImportItem]
) -> list[WatermarkUpdate]:
    """The batch-level cursors of units that hold many sessions (a Cursor database, a prompt
    history), less those of units with an item that failed: such a unit keeps its old cursor,
    so the next run reads it again and retries the item; its other sessions are then skipped
    by fingerprint. Saving the cursor would lose the failed session until its source changed."""
    held = set()
    for item in failed:
        path, host = item.session.get("source_path"), item.session.get("host")
        held.add((item.source_provider, path))
        if host and path:  # pushed to a gateway: the unit is keyed by its machine
            held.add((item.source_provider, pushed_key(host, path)))
    return [wm for wm in watermarks if (wm.source_provider, wm.unit_key) not in held]


def watermark_values(wm: WatermarkUpdate, run_id: str) -> tuple[Any, ...]:
    """A watermarks row: cursor and state as canonical JSON, so equal cursors compare equal."""
    state = wm.state
    if state is not None and not isinstance(state, bytes):
        state = canonical_json(state)
    cursor = canonical_json(dict(wm.cursor)).decode()
    text = None if state is None else state.decode()
    return (wm.source_provider, wm.unit_key, cursor, now_iso(), run_id, text)


def resolved_rejects(
    clears: Iterable[Clear], unresolved: Iterable[tuple[str, str, str, str]]
) -> list[str]:
    """The ids of unresolved rejects (id, provider, unit, location) that a clear covers. Rejects
    raised again in the same batch are saved after this, which unresolves them again."""
    by_unit: dict[tuple[str, str], list[Clear]] = {}
    for clear in clears:
        by_unit.setdefault((clear.source_provider, clear.unit_key), []).append(clear)
    return [
        rid
        for rid, provider, unit, location in unresolved
        if any(c.covers(location) for c in by_unit.get((provider, unit), ()))
    ]


REJECT_COLUMNS = (
    "reject_id, run_id, source_provider, unit_key, location, reason, raw_excerpt, created_at"
)


def reject_values(reject: Reject, run_id: str, now: str) -> tuple[Any, ...]:
    """A rejects row; one per location, so a record rejected again replaces its old reason."""
    rid = stable_id("rej", reject.source_provider, reject.unit_key, reject.location)
    return (
        rid,
        run_id,
        reject.source_provider,
        reject.unit_key,
        reject.location,
        reject.reason,
        reject.raw_excerpt,
        now,
    )


def replayed(key: str, request_hash: str, stored: Any) -> ImportResponse | None:
    """The stored response for a repeated idempotency key, given the stored (request hash,
    response) row or None; the same key with a different request is an error."""
    if stored is None:
        return None
    if stored[0] != request_hash:
        raise IdempotencyConflict(
            f"idempotency key {key!r} was already used for a different request"
        )
    return ImportResponse.from_json(orjson.loads(stored[1]), replayed=True)


def as_replayed(run_id: str, response: ImportResponse) -> ImportResponse:
    """What a replayed request did in this run: nothing written, every item skipped."""
    return ImportResponse(
        run_id,
        tuple(replace(r, status="skipped", reason=None, rows_written=0) for r in response.results),
    )


def finish_sql(p: str, json_p: str) -> str:
    """Both stores' `finish_run` update, given their placeholders for a value and a JSON one."""
    return (
        f"UPDATE import_runs SET finished_at = {p}, bytes_read = bytes_read + {p},"
        f" rejects = {p}, dedupe_hits = dedupe_hits + {p}, retries = {p}, retry_reasons = {json_p},"
        f" tail_lag_ms = {p}, tail_lag_p50_ms = {p}, error = {p}, redactions = {json_p}"
        f" WHERE run_id = {p}"
    )


def counts_json(held: Any, *more: Mapping[str, int]) -> str | None:
    """A JSON column of counts (`held`: as a store hands it back) with `more` added."""
    total: Counter[str] = Counter()
    if held:
        total.update(orjson.loads(held) if isinstance(held, str | bytes) else held)
    for counts in more:
        total.update(counts)
    return orjson.dumps(dict(sorted(total.items()))).decode() if total else None


# A batch's redactions added to its run: the held value is read in the same transaction.
RUN_REDACTIONS = "SELECT redactions FROM import_runs WHERE run_id = {p}"
ADD_RUN_REDACTIONS = "UPDATE import_runs SET redactions = {json_p} WHERE run_id = {p}"


def finish_values(
    run_id: str,
    totals: RunTotals,
    held: str | None,
    taken: Mapping[str, int],
    held_redactions: Any = None,
) -> tuple[Any, ...]:
    """The parameters of `finish_sql`: the run's retry reasons are those already on its row
    (`held`, a run finished twice), the pipeline's (`totals`) and the store's own (`taken`);
    its redactions, those its batches added (`held_redactions`) and the producer's."""
    reasons: Counter[str] = Counter(orjson.loads(held) if held else {})
    reasons.update(totals.retry_reasons)
    reasons.update(taken)
    return (
        now_iso(),
        totals.bytes_read,
        totals.rejects,
        totals.dedupe_hits,
        sum(reasons.values()),
        orjson.dumps(dict(sorted(reasons.items()))).decode() if reasons else None,
        totals.tail_lag_ms,
        totals.tail_lag_p50_ms,
        totals.error,
        counts_json(held_redactions, totals.redactions),
        run_id,
    )


def session_upsert_sql(placeholders: str, derived: Sequence[tuple[str, str]] = ()) -> str:
    """Both stores' session upsert, given their VALUES placeholders and any columns a store
    derives ((column, value expression), after the declared ones). Every column is replaced
    except the insert-only ones, and a lineage link the store resolved from the parent's tool
    call survives the child's re-import (COALESCE)."""
    updates = []
    for n in SESSIONS.names:
        if n == "session_id" or n in INSERT_ONLY:
            continue
        if n in LINK_COLUMNS:
            updates.append(f"{n} = COALESCE(excluded.{n}, sessions.{n})")
        else:
            updates.append(f"{n} = excluded.{n}")
    updates.extend(f"{column} = excluded.{column}" for column, _ in derived)
    columns = ", ".join([*SESSIONS.names, *(column for column, _ in derived)])
    values = ", ".join([placeholders, *(value for _, value in derived)])
    return (
        f"INSERT INTO sessions ({columns}) VALUES ({values})"
        f" ON CONFLICT (session_id) DO UPDATE SET {', '.join(updates)}"
    )


def deleted_reason(item: ImportItem) -> str:
    ref = reference(item.session.get("label"), item.session_id)
    again = command_line(["tracehouse", "sessions", "restore", ref])
    return f"deleted from this ledger: `{again}` lets it back"


# `session_history`: one row per import that changed a session, in the same transaction.
HISTORY_COLUMNS = ("history_id", "session_id", "run_id", "status", "fingerprint_before",
                   "fingerprint_after", "rows_written", "recorded_at")  # fmt: skip


def history_values(
    item: ImportItem, before: Existing | None, run_id: str, rows_written: int, now: str
) -> tuple[Any, ...]:
    status = "upserted" if before is not None else "imported"
    # A session repeated within a run with the same content is one change.
    key = stable_id("his", item.source_provider, item.session_id, run_id, item.fingerprint)
    fingerprint_before = before.fingerprint if before is not None else None
    return (key, item.session_id, run_id, status, fingerprint_before, item.fingerprint,
            rows_written, now)  # fmt: skip
