"""`import_batch` on PostgreSQL: DESIGN §4 with COPY and one merge per table.

The caller holds one transaction for the batch and retries it whole on a deadlock or a
serialization failure. Inside it:

1. advisory locks on every session, watermark and idempotency key the batch touches, taken in
   one sorted order, so two machines pushing overlapping batches queue rather than deadlock, and
   the second sees what the first wrote (its item is `skipped`, not a second `imported`);
2. the rows of the sessions to write go by binary COPY into temporary staging tables;
3. the fast path merges all of them at once — one `INSERT … SELECT … ON CONFLICT DO UPDATE …
   WHERE fingerprint IS DISTINCT FROM` per table — inside a savepoint. If any statement fails,
   that savepoint rolls back and every item is written again in its own savepoint, so the failing
   item is `failed` with the server's reason and the rest land.
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson
import psycopg
import xxhash
from psycopg import errors as pg_errors

from tracehouse import __version__
from tracehouse.model.columns import Kind
from tracehouse.model.contract import (
    Clear,
    ImportBatch,
    ImportItem,
    ImportResponse,
    ItemResult,
    Status,
    WatermarkUpdate,
    now_iso,
)
from tracehouse.model.tables import SESSIONS, TOOL_CALLS
from tracehouse.search.postgres_words import VECTORS
from tracehouse.store.items import (
    ADD_RUN_REDACTIONS,
    HISTORY_COLUMNS,
    MIGRATION,
    RECOVERED_ROWS,
    REJECT_COLUMNS,
    RUN_REDACTIONS,
    Action,
    Existing,
    as_replayed,
    counts_json,
    decide,
    deleted_reason,
    history_values,
    missing_at,
    reject_values,
    replayed,
    resolved_rejects,
    session_upsert_sql,
    session_values,
    supersedes,
    unit_cursors_to_save,
    watermark_values,
    written,
)
from tracehouse.store.labels import claim_label, rewrite_threads
from tracehouse.store.postgres.lineage import resolve_links
from tracehouse.store.postgres.staging import MERGE_ALL, MERGE_ONE, TABLES, stage, without_nul
from tracehouse.store.postgres.tx import Conn, PgTx

# Failures that say "try the whole transaction again", not "this item is bad".
RETRYABLE = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)

_SESSION_VECTORS = VECTORS[SESSIONS.name]
UPSERT_SESSION = session_upsert_sql(
    ", ".join("%s::json" if c.kind is Kind.JSON else "%s" for c in SESSIONS.columns),
    [(v.column, "to_tsvector('simple', %s)") for v in _SESSION_VECTORS],
)
_BOOL_AT = [i for i, c in enumerate(SESSIONS.columns) if c.kind is Kind.BOOL]
_SESSION_WORDS = [v.preparer(SESSIONS.names) for v in _SESSION_VECTORS]

SAVE_WATERMARK = (
    "INSERT INTO watermarks VALUES (%s, %s, %s::json, %s, %s, %s::json)"
    " ON CONFLICT (source_provider, unit_key) DO UPDATE SET cursor = excluded.cursor,"
    " updated_at = excluded.updated_at, run_id = excluded.run_id, state = excluded.state"
    " WHERE watermarks.cursor::text IS DISTINCT FROM excluded.cursor::text"
    " OR watermarks.state::text IS DISTINCT FROM excluded.state::text"
)
SAVE_REJECT = (
    f"INSERT INTO rejects ({REJECT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (reject_id) DO UPDATE SET run_id = excluded.run_id,"
    " reason = excluded.reason, raw_excerpt = excluded.raw_excerpt,"
    " created_at = excluded.created_at, resolved_at = NULL"
)


def resolve_rejects(conn: Conn, clears: Sequence[Clear], now: str) -> int:
    if not clears:
        return 0
    unresolved = conn.execute(
        "SELECT reject_id, source_provider, unit_key, location FROM rejects"
        " WHERE resolved_at IS NULL AND unit_key = ANY(%s)",
        (sorted({c.unit_key for c in clears}),),
    ).fetchall()
    ids = resolved_rejects(clears, unresolved)
    if ids:
        conn.execute("UPDATE rejects SET resolved_at = %s WHERE reject_id = ANY(%s)", (now, ids))
    return len(ids)


def import_batch(conn: Conn, batch: ImportBatch) -> ImportResponse:
    key = batch.idempotency_key
    request_hash = batch.content_hash() if key else None
    _lock(conn, batch)
    if key and request_hash:
        stored = conn.execute(
            "SELECT request_hash, response FROM import_requests WHERE idempotency_key = %s", (key,)
        ).fetchone()
        response = replayed(key, request_hash, stored)
        if response is not None:
            # The replay is a run of its own in the log: every item skipped, a dedupe hit each.
            ensure_run(conn, batch.run_id, batch.mode, source=batch.source)
            _add_run_counts(conn, batch.run_id, as_replayed(batch.run_id, response))
            return response

    ensure_run(conn, batch.run_id, batch.mode, source=batch.source)
    now = now_iso()
    session_ids = [item.session_id for item in batch.items]
    deleted = {
        row[0]
        for row in conn.execute(
            "SELECT session_id FROM session_tombstones WHERE session_id = ANY(%s)", (session_ids,)
        )
    }
    plan = _plan(batch, _existing(conn, session_ids), now, deleted)
    to_write = [(item, before) for item, action, before in plan if action == "write"]
    counts: Counter[str] = Counter()
    failed: dict[int, str] = {}
    if to_write:
        stage(conn, batch, {item.session_id for item, _ in to_write})
        host = socket.gethostname()
        repeated = len({item.session_id for item, _ in to_write}) < len(to_write)
        # One set of statements for the whole batch; if the server refuses it (or a session
        # repeats), each item alone, so that only the items at fault fail.
        if repeated or _write(conn, batch, to_write, host, now, counts, alone=False):
            for pair in to_write:
                reason = _write(conn, batch, [pair], host, now, counts, alone=True)
                if reason is not None:
                    failed[id(pair[0])] = reason

    results: list[ItemResult] = []
    watermarks: list[WatermarkUpdate] = []
    refused: list[ImportItem] = []
    history: list[tuple[Any, ...]] = []
    for item, action, before in plan:
        label = before.label if before is not None and before.label else item.session.get("label")
        ident = (item.source_provider, item.source_session_id, label)
        if id(item) in failed:
            results.append(ItemResult(*ident, "failed", failed[id(item)]))
            refused.append(item)
            continue
        watermarks.extend(item.watermarks)
        if action == "write":
            status: Status = "upserted" if before is not None else "imported"
            if before is None:
                # one writer at a time per label, or two new sessions could both keep it
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key("label", str(label)),))
                ident = (*ident[:2], claim_label(PgTx(conn), dict(item.session), now))
            rewrite_threads(PgTx(conn), item.session_id)
            written_rows = 1 + counts[item.session_id]
            results.append(ItemResult(*ident, status, None, written_rows))
            if batch.mode != MIGRATION:  # a copy carries the history it was copied with
                history.append(history_values(item, before, batch.run_id, written_rows, now))
            counts[item.session_id] = 0  # a repeat of the session is counted once
            continue
        if action == "deleted":
            results.append(ItemResult(*ident, "skipped", deleted_reason(item)))
            continue
        if action == "refresh":  # the source came back (or, copied, is gone)
            conn.execute(
                "UPDATE sessions SET source_missing_at = %s WHERE session_id = %s",
                (missing_at(item, batch.mode), item.session_id),
            )
        results.append(ItemResult(*ident, "skipped"))

    if history:
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO session_history VALUES ({', '.join(['%s'] * len(HISTORY_COLUMNS))})"
                " ON CONFLICT (history_id) DO NOTHING",
                history,
            )
    watermarks.extend(unit_cursors_to_save(batch.watermarks, refused))
    _save_watermarks(conn, watermarks, batch.run_id)
    resolve_rejects(conn, batch.clears, now)
    if batch.rejects:
        with conn.cursor() as cur:
            cur.executemany(
                SAVE_REJECT, [reject_values(r, batch.run_id, now) for r in batch.rejects]
            )
    response = ImportResponse(batch.run_id, batch.in_request_order(results))
    _add_run_counts(conn, batch.run_id, response)
    if batch.redactions:
        row = conn.execute(RUN_REDACTIONS.format(p="%s"), (batch.run_id,)).fetchone()
        held = row[0] if row else None
        update = ADD_RUN_REDACTIONS.format(p="%s", json_p="%s::json")
        conn.execute(update, (counts_json(held, batch.redactions), batch.run_id))
    if key:
        conn.execute(
            "INSERT INTO import_requests VALUES (%s, %s, %s::json, %s)",
            (key, request_hash, orjson.dumps(response.to_json()).decode(), now),
        )
    return response


def _lock_key(*parts: str) -> int:
    return xxhash.xxh64_intdigest("\x1f".join(parts).encode()) - 2**63


def _lock(conn: Conn, batch: ImportBatch) -> None:
    """Advisory locks on what the batch writes, and on the sessions its lineage links name.

    Under READ COMMITTED, a parent and its child committed at once by two writers would each
    resolve links against a ledger without the other's rows, and neither would link. Locking
    both ends of every link (the parent a child names, the children a parent's calls spawned)
    makes the second writer wait for the first and then see its rows."""
    keys = {_lock_key("session", sid) for sid in _linked_sessions(batch)}
    for wm in (*batch.watermarks, *(w for item in batch.items for w in item.watermarks)):
        keys.add(_lock_key("unit", wm.source_provider, wm.unit_key))
    if batch.idempotency_key:
        keys.add(_lock_key("request", batch.idempotency_key))
    ordered = sorted(keys)
    for start in range(0, len(ordered), 1000):
        conn.execute(
            "SELECT pg_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS k",
            (ordered[start : start + 1000],),
        )


def _linked_sessions(batch: ImportBatch) -> set[str]:
    found = {item.session_id for item in batch.items}
    found.update(str(item.session["parent_session_id"]) for item in batch.items
                 if item.session.get("parent_session_id"))  # fmt: skip
    at = TOOL_CALLS.names.index("spawned_session_id")
    found.update(row[at] for row in batch.tuples("tool_calls") if row[at])
    return found


def _existing(conn: Conn, session_ids: list[str]) -> dict[str, Existing]:
    rows = conn.execute(
        "SELECT session_id, fingerprint, first_imported_at, source_missing_at,"
        " (metadata::jsonb ->> 'recovered_from') IS NOT NULL, label"
        " FROM sessions WHERE session_id = ANY(%s)",
        (session_ids,),
    )
    return {row[0]: Existing(row[1], row[2], row[3], bool(row[4]), row[5]) for row in rows}


def _plan(
    batch: ImportBatch, existing: dict[str, Existing], now: str, deleted: set[str]
) -> list[tuple[ImportItem, Action, Existing | None]]:
    """Each item's action, deciding repeats of a session against what the earlier one wrote."""
    plan = []
    for item in batch.items:
        before = existing.get(item.session_id)
        action = decide(item, before, batch.mode, item.session_id in deleted)
        if action == "write":
            existing[item.session_id] = written(item, before, now)
        plan.append((item, action, before))
    return plan


def _session_params(
    batch: ImportBatch, item: ImportItem, before: Existing | None, host: str, now: str
) -> list[Any]:
    values = session_values(item, before, batch.mode, host, now)
    for i in _BOOL_AT:
        if values[i] is not None:
            values[i] = bool(values[i])
    values.extend(prepare(values) for prepare in _SESSION_WORDS)
    return list(without_nul(values))


def _write_group(
    conn: Conn,
    batch: ImportBatch,
    group: list[tuple[ImportItem, Existing | None]],
    host: str,
    now: str,
    alone: bool,
) -> Counter[str]:
    """Write sessions and their staged rows in one savepoint: all staged rows at once, or
    (`alone`) only the one session's. Returns rows written per session; raises what failed."""
    found: Counter[str] = Counter()
    with conn.transaction(), conn.cursor() as cur:
        superseded = [item.session_id for item, before in group if supersedes(item, before)]
        for name in RECOVERED_ROWS if superseded else ():
            cur.execute(
                f"DELETE FROM {name} WHERE session_id = ANY(%s)"
                " AND (metadata::jsonb ->> 'recovered_from') IS NOT NULL",
                (superseded,),
            )
        params = [_session_params(batch, item, before, host, now) for item, before in group]
        cur.executemany(UPSERT_SESSION, params)
        for table in TABLES:
            if alone:
                cur.execute(MERGE_ONE[table.name], (group[0][0].session_id,))
            else:
                cur.execute(MERGE_ALL[table.name])
            found.update(row[0] for row in cur.fetchall())
        resolve_links(cur, [item.session_id for item, _ in group], found)
    return found


def _write(
    conn: Conn,
    batch: ImportBatch,
    group: list[tuple[ImportItem, Existing | None]],
    host: str,
    now: str,
    counts: Counter[str],
    *,
    alone: bool,
) -> str | None:
    """Write a group of items in a savepoint: None, or the server's reason with nothing of the
    group written."""
    try:
        counts.update(_write_group(conn, batch, group, host, now, alone=alone))
    except RETRYABLE:
        raise
    except psycopg.Error as exc:
        return f"store: {str(exc).strip().splitlines()[0]}"
    return None


def _save_watermarks(conn: Conn, watermarks: list[WatermarkUpdate], run_id: str) -> None:
    if not watermarks:
        return
    # One row per unit, the last cursor winning, in lock order.
    latest = {(wm.source_provider, wm.unit_key): wm for wm in watermarks}
    rows = [watermark_values(latest[k], run_id) for k in sorted(latest)]
    with conn.cursor() as cur:
        cur.executemany(SAVE_WATERMARK, rows)


def ensure_run(
    conn: Conn, run_id: str, mode: str, started_at: str | None = None, source: str = "tracehouse"
) -> None:
    conn.execute(
        "INSERT INTO import_runs (run_id, mode, started_at, imported, upserted, skipped, failed,"
        " rejects, bytes_read, rows_written, retries, dedupe_hits, host, importer_version, source)"
        " VALUES (%s, %s, %s, 0, 0, 0, 0, 0, 0, 0, 0, 0, %s, %s, %s)"
        " ON CONFLICT (run_id) DO NOTHING",
        (run_id, mode, started_at or now_iso(), socket.gethostname(), __version__, source),
    )


def _add_run_counts(conn: Conn, run_id: str, response: ImportResponse) -> None:
    conn.execute(
        "UPDATE import_runs SET imported = imported + %s, upserted = upserted + %s,"
        " skipped = skipped + %s, failed = failed + %s, rows_written = rows_written + %s,"
        # A skipped item is a dedupe hit: its fingerprint matched, none of its rows was touched.
        " dedupe_hits = dedupe_hits + %s WHERE run_id = %s",
        (
            response.count("imported"),
            response.count("upserted"),
            response.count("skipped"),
            response.count("failed"),
            response.rows_written,
            response.count("skipped"),
            run_id,
        ),
    )
