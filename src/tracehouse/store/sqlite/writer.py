"""`import_batch` on SQLite: DESIGN §4 in SQL.

The caller holds one transaction for the whole batch; a failing item rolls back alone (see
`import_batch`). Rows are upserted by id with `… DO UPDATE … WHERE fingerprint IS NOT
excluded.fingerprint`, so an unchanged row is never rewritten, and nothing is ever deleted.
"""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Iterable

import orjson

from tracehouse import __version__
from tracehouse.model.contract import (
    Clear,
    ImportBatch,
    ImportResponse,
    Reject,
    now_iso,
    pushed_key,
)
from tracehouse.model.tables import CONTENT_TABLES
from tracehouse.search import sqlite_index
from tracehouse.store.items import (
    ADD_RUN_REDACTIONS,
    REJECT_COLUMNS,
    RUN_REDACTIONS,
    Existing,
    as_replayed,
    counts_json,
    decide,
    reject_values,
    replayed,
    resolved_rejects,
    unit_cursors_to_save,
)
from tracehouse.store.sqlite.apply import Items, Slices, Statements, save_watermark


class ItemFailed(Exception):
    """A store error in an item of a batch that was its transaction's only work (`alone`): the
    caller rolls the transaction back and runs the batch again with `isolated=True`."""


def import_batch(
    conn: sqlite3.Connection,
    sql: Statements,
    batch: ImportBatch,
    *,
    alone: bool = False,
    isolated: bool = False,
) -> ImportResponse:
    """The caller brings the search index up to date before it commits (`sqlite_index.flush`):
    once for a group of batches, FTS5 writes one segment instead of a small one per batch (the
    next batch's savepoint would push its pending terms out), and the group's indexing costs half.

    `alone`: the batch is all its transaction holds, so a failing item can roll back the
    whole transaction (ItemFailed) instead of a savepoint; `isolated`: each item in a savepoint
    of its own, a store error failing that item alone."""
    key = batch.idempotency_key
    request_hash = batch.content_hash() if key else None
    if key and request_hash:
        stored = conn.execute(
            "SELECT request_hash, response FROM import_requests WHERE idempotency_key = ?", (key,)
        ).fetchone()
        response = replayed(key, request_hash, stored)
        if response is not None:
            # The replay is a run of its own in the log: every item skipped, a dedupe hit each.
            ensure_run(conn, batch.run_id, batch.mode, source=batch.source)
            _add_run_counts(conn, batch.run_id, as_replayed(batch.run_id, response))
            return response

    ensure_run(conn, batch.run_id, batch.mode, source=batch.source)
    session_ids = [item.session_id for item in batch.items]
    existing = _existing(conn, session_ids)
    deleted = _tombstoned(conn, session_ids)
    # Rows are converted only for the sessions that will be written: a no-change re-import
    # costs one lookup per session and never touches its rows.
    to_write = {
        item.session_id
        for item in batch.items
        if decide(item, existing.get(item.session_id), batch.mode, item.session_id in deleted)
        == "write"
    }
    partitions = {
        name: Slices(table, batch.tuples(table.name) if to_write else [], to_write)
        for name, table in _CONTENT_BY_NAME.items()
    }
    rows = {name: p.by_session for name, p in partitions.items()}
    sqlite_index.note_sessions(conn, rows, batch.unspaced)
    now = now_iso()
    items = Items(conn, sql, batch, partitions, socket.gethostname(), now, deleted)
    # Each item must fail alone, but a savepoint per item cost the writer 11% of a backfill:
    # SQLite copies every existing page an item changes into the savepoint's journal, and ids
    # are hashes, so each item's rows touch index pages all over and the batch's items copy the
    # same pages again and again. The batch runs under one savepoint (its journal, in memory,
    # holds each page once: about 16 MB for an 8 MB batch of the bench corpus), and only if an
    # item fails is the batch rolled back and run again with a savepoint per item. Chunks of
    # 8 or 32 items, or of 500 or 2,000 rows, kept most of the copying.
    #
    # A batch alone in its transaction needs no savepoint of its own: the transaction is one.
    # On the import bench, the batch savepoint's page copies were ~10% of an import.
    if isolated:
        results, failed = items.apply(existing, isolated=True)
    elif alone:
        try:
            results, failed = items.apply(existing, isolated=False)
        except sqlite3.Error as exc:
            raise ItemFailed(str(exc)) from exc
    else:
        conn.execute("SAVEPOINT batch")
        try:
            results, failed = items.apply(dict(existing), isolated=False)
        except sqlite3.Error:
            conn.execute("ROLLBACK TO batch")
            results, failed = items.apply(existing, isolated=True)
        conn.execute("RELEASE batch")

    for wm in unit_cursors_to_save(batch.watermarks, failed):
        save_watermark(conn, wm, batch.run_id)
    resolve_rejects(conn, batch.clears, now)
    for reject in batch.rejects:
        save_reject(conn, batch.run_id, reject, now)

    response = ImportResponse(batch.run_id, batch.in_request_order(results))
    _add_run_counts(conn, batch.run_id, response)
    if batch.redactions:
        (held,) = conn.execute(RUN_REDACTIONS.format(p="?"), (batch.run_id,)).fetchone()
        update = ADD_RUN_REDACTIONS.format(p="?", json_p="?")
        conn.execute(update, (counts_json(held, batch.redactions), batch.run_id))
    if key:
        conn.execute(
            "INSERT INTO import_requests VALUES (?, ?, ?, ?)",
            (key, request_hash, orjson.dumps(response.to_json()).decode(), now),
        )
    return response


_CONTENT_BY_NAME = {t.name: t for t in CONTENT_TABLES.values()}


def _tombstoned(conn: sqlite3.Connection, session_ids: list[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start : start + 500]
        found.update(
            row[0]
            for row in conn.execute(
                "SELECT session_id FROM session_tombstones"
                f" WHERE session_id IN ({', '.join('?' * len(chunk))})",
                chunk,
            )
        )
    return found


def _existing(conn: sqlite3.Connection, session_ids: list[str]) -> dict[str, Existing]:
    found: dict[str, Existing] = {}
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start : start + 500]
        for row in conn.execute(
            "SELECT session_id, fingerprint, first_imported_at, source_missing_at,"
            " json_extract(metadata, '$.recovered_from') IS NOT NULL, label FROM sessions"
            f" WHERE session_id IN ({', '.join('?' * len(chunk))})",
            chunk,
        ):
            found[row[0]] = Existing(row[1], row[2], row[3], bool(row[4]), row[5])
    return found


def save_reject(conn: sqlite3.Connection, run_id: str, reject: Reject, now: str) -> None:
    conn.execute(
        f"INSERT INTO rejects ({REJECT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (reject_id) DO UPDATE SET run_id = excluded.run_id,"
        " reason = excluded.reason, raw_excerpt = excluded.raw_excerpt,"
        " created_at = excluded.created_at, resolved_at = NULL",
        reject_values(reject, run_id, now),
    )


def resolve_rejects(conn: sqlite3.Connection, clears: tuple[Clear, ...], now: str) -> int:
    units = sorted({c.unit_key for c in clears})
    unresolved: list[tuple[str, str, str, str]] = []
    for start in range(0, len(units), 500):
        chunk = units[start : start + 500]
        unresolved += conn.execute(
            "SELECT reject_id, source_provider, unit_key, location FROM rejects"
            f" WHERE resolved_at IS NULL AND unit_key IN ({', '.join('?' * len(chunk))})",
            chunk,
        ).fetchall()
    ids = resolved_rejects(clears, unresolved)
    conn.executemany(
        "UPDATE rejects SET resolved_at = ? WHERE reject_id = ?", [(now, rid) for rid in ids]
    )
    return len(ids)


def ensure_run(
    conn: sqlite3.Connection,
    run_id: str,
    mode: str,
    started_at: str | None = None,
    source: str = "tracehouse",
) -> None:
    conn.execute(
        "INSERT INTO import_runs (run_id, mode, started_at, imported, upserted, skipped, failed,"
        " rejects, bytes_read, rows_written, retries, dedupe_hits, host, importer_version, source)"
        " VALUES (?, ?, ?, 0, 0, 0, 0, 0, 0, 0, 0, 0, ?, ?, ?)"
        " ON CONFLICT (run_id) DO NOTHING",
        (run_id, mode, started_at or now_iso(), socket.gethostname(), __version__, source),
    )


def _add_run_counts(conn: sqlite3.Connection, run_id: str, response: ImportResponse) -> None:
    conn.execute(
        "UPDATE import_runs SET imported = imported + ?, upserted = upserted + ?,"
        " skipped = skipped + ?, failed = failed + ?, rows_written = rows_written + ?,"
        # A skipped item is a dedupe hit: its fingerprint matched, none of its rows was touched.
        " dedupe_hits = dedupe_hits + ? WHERE run_id = ?",
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


def mark_missing(
    conn: sqlite3.Connection,
    provider: str,
    unit_keys: Iterable[str],
    at: str,
    run_id: str,
    machine: str | None = None,
) -> int:
    """Flag the sessions of units that are gone (DESIGN §5: keep everything, delete nothing) and
    note it in their cursors; returns the sessions flagged."""
    flagged = 0
    for key in unit_keys:
        flagged += conn.execute(
            "UPDATE sessions SET source_missing_at = ? WHERE source_provider = ?"
            " AND source_path = ? AND source_missing_at IS NULL"
            + (" AND host = ?" if machine else ""),
            (at, provider, key, *([machine] if machine else [])),
        ).rowcount
        conn.execute(
            "UPDATE watermarks SET cursor = json_set(coalesce(cursor, '{}'),"
            " '$.missing', json('true')), run_id = ? WHERE source_provider = ?"
            " AND unit_key = ?",
            (run_id, provider, pushed_key(machine, key) if machine else key),
        )
    return flagged
