"""`import_batch` on SQLite: DESIGN §4 in SQL.

The caller holds one transaction for the whole batch; each item runs inside its own savepoint, so a
failing item rolls back alone. Rows are upserted by id with `… DO UPDATE … WHERE fingerprint IS NOT
excluded.fingerprint`, so an unchanged row is never rewritten, and nothing is ever deleted.
"""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Mapping
from typing import Any

import orjson

from tracehouse import __version__
from tracehouse.errors import IdempotencyConflict
from tracehouse.model.contract import (
    ImportBatch,
    ImportItem,
    ImportResponse,
    ItemResult,
    Reject,
    Status,
    WatermarkUpdate,
    now_iso,
)
from tracehouse.model.fingerprint import canonical_json
from tracehouse.model.ids import stable_id
from tracehouse.model.rows import json_text
from tracehouse.model.tables import CONTENT_TABLES, SESSIONS, Kind, Table

_SESSION_JSON = [c.name for c in SESSIONS.columns if c.kind is Kind.JSON]
_LINK_COLUMNS = ("parent_session_id", "parent_message_id", "spawn_tool_call_id")
_INSERT_ONLY = ("first_imported_at",)


def _upsert_sql(table: Table) -> str:
    names = table.names
    keys = ", ".join(table.primary_key)
    updates = [f"{n} = excluded.{n}" for n in names if n not in table.primary_key]
    return (
        f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        f" ON CONFLICT ({keys}) DO UPDATE SET {', '.join(updates)}"
        f" WHERE {table.name}.fingerprint IS NOT excluded.fingerprint"
    )


def _session_upsert_sql() -> str:
    names = SESSIONS.names
    updates = []
    for n in names:
        if n == "session_id" or n in _INSERT_ONLY:
            continue
        if n in _LINK_COLUMNS:
            # A link the store resolved from the parent's tool call survives the child's re-import.
            updates.append(f"{n} = COALESCE(excluded.{n}, sessions.{n})")
        else:
            updates.append(f"{n} = excluded.{n}")
    return (
        f"INSERT INTO sessions ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        f" ON CONFLICT (session_id) DO UPDATE SET {', '.join(updates)}"
    )


class Statements:
    """SQL built once per store from the table declarations (sqlite3 caches the prepared forms)."""

    def __init__(self) -> None:
        self.content = {t.name: _upsert_sql(t) for t in CONTENT_TABLES.values()}
        self.session = _session_upsert_sql()


def import_batch(conn: sqlite3.Connection, sql: Statements, batch: ImportBatch) -> ImportResponse:
    key = batch.idempotency_key
    request_hash = batch.content_hash() if key else None
    if key:
        stored = conn.execute(
            "SELECT request_hash, response FROM import_requests WHERE idempotency_key = ?", (key,)
        ).fetchone()
        if stored is not None:
            if stored[0] != request_hash:
                raise IdempotencyConflict(
                    f"idempotency key {key!r} was already used for a different request"
                )
            return ImportResponse.from_json(orjson.loads(stored[1]), replayed=True)

    ensure_run(conn, batch.run_id, batch.mode)
    existing = _existing(conn, [item.session_id for item in batch.items])
    # Rows are converted only for the sessions that will be written: a no-change re-import
    # costs one lookup per session and never touches its rows.
    to_write = {
        item.session_id
        for item in batch.items
        if existing.get(item.session_id, (None,))[0] != item.fingerprint
    }
    partitions = {
        name: Slices(table, batch.tuples(table.name) if to_write else [], to_write)
        for name, table in _CONTENT_BY_NAME.items()
    }
    results: list[ItemResult] = list(batch.invalid)
    host = socket.gethostname()
    now = now_iso()
    for item in batch.items:
        result = _apply_item(
            conn, sql, batch, item, existing.get(item.session_id), partitions, host, now
        )
        written = result.status not in ("failed", "skipped")
        if written:  # a repeat of this session later in the batch is a skip
            first = existing.get(item.session_id, (None, now))[1]
            existing[item.session_id] = (item.fingerprint, first, None, recovered(item.session))
        results.append(result)

    for wm in batch.watermarks:
        save_watermark(conn, wm, batch.run_id)
    for reject in batch.rejects:
        save_reject(conn, batch.run_id, reject, now)

    response = ImportResponse(batch.run_id, tuple(results))
    _add_run_counts(conn, batch.run_id, response)
    if key:
        conn.execute(
            "INSERT INTO import_requests VALUES (?, ?, ?, ?)",
            (key, request_hash, orjson.dumps(response.to_json()).decode(), now),
        )
    return response


_CONTENT_BY_NAME = {t.name: t for t in CONTENT_TABLES.values()}


def _existing(conn: sqlite3.Connection, session_ids: list[str]) -> dict[str, tuple[Any, ...]]:
    found: dict[str, tuple[Any, ...]] = {}
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start : start + 500]
        for row in conn.execute(
            "SELECT session_id, fingerprint, first_imported_at, source_missing_at,"
            " json_extract(metadata, '$.recovered_from') FROM sessions"
            f" WHERE session_id IN ({', '.join('?' * len(chunk))})",
            chunk,
        ):
            found[row[0]] = row[1:]
    return found


class Slices:
    """One table's rows to write, grouped by session (a session's rows keep their order)."""

    def __init__(self, table: Table, rows: list[tuple[Any, ...]], sessions: set[str]) -> None:
        self.by_session: dict[str, list[tuple[Any, ...]]] = {}
        at = table.names.index("session_id")
        for row in rows:
            if row[at] in sessions:
                self.by_session.setdefault(row[at], []).append(row)

    def rows(self, session_id: str) -> list[tuple[Any, ...]] | None:
        return self.by_session.get(session_id)


def _apply_item(
    conn: sqlite3.Connection,
    sql: Statements,
    batch: ImportBatch,
    item: ImportItem,
    existing: tuple[Any, ...] | None,
    partitions: Mapping[str, Slices],
    host: str,
    now: str,
) -> ItemResult:
    session = item.session
    label = session.get("label")
    conn.execute("SAVEPOINT item")
    try:
        if existing is not None and recovered(session) and not existing[3]:
            # Prompts recovered from a history file never replace the session their own
            # transcript gave: the ledger already holds more than they can.
            _save_watermarks(conn, item.watermarks, batch.run_id)
            conn.execute("RELEASE item")
            return ItemResult(item.source_provider, item.source_session_id, label, "skipped")
        if existing is not None and existing[0] == item.fingerprint:
            if existing[2] is not None:  # the source came back: it is no longer missing
                conn.execute(
                    "UPDATE sessions SET source_missing_at = NULL WHERE session_id = ?",
                    (item.session_id,),
                )
            _save_watermarks(conn, item.watermarks, batch.run_id)
            conn.execute("RELEASE item")
            return ItemResult(item.source_provider, item.source_session_id, label, "skipped")

        before = conn.total_changes
        row = dict(session)
        row.update(
            fingerprint=item.fingerprint,
            host=session.get("host") or host,
            importer_version=session.get("importer_version") or __version__,
            first_imported_at=existing[1] if existing else now,
            last_imported_at=now,
            source_missing_at=None,
        )
        for name in _SESSION_JSON:
            row[name] = json_text(row.get(name))
        conn.execute(sql.session, [row.get(n) for n in SESSIONS.names])
        for name, slices in partitions.items():
            rows = slices.rows(item.session_id)
            if rows is not None:
                conn.executemany(sql.content[name], rows)
        _resolve_links(conn, item.session_id)
        written = conn.total_changes - before
        _save_watermarks(conn, item.watermarks, batch.run_id)
        conn.execute("RELEASE item")
    except sqlite3.Error as exc:
        conn.execute("ROLLBACK TO item")
        conn.execute("RELEASE item")
        return ItemResult(
            item.source_provider, item.source_session_id, label, "failed", f"store: {exc}"
        )
    status: Status = "upserted" if existing is not None else "imported"
    return ItemResult(item.source_provider, item.source_session_id, label, status, None, written)


def _resolve_links(conn: sqlite3.Connection, session_id: str) -> None:
    """Lineage from the spawning tool call, whichever of parent and child arrived first."""
    changed = (
        "(sessions.parent_session_id IS NOT tc.session_id"
        " OR sessions.parent_message_id IS NOT tc.message_id"
        " OR sessions.spawn_tool_call_id IS NOT tc.tool_call_id)"
    )
    conn.execute(
        "UPDATE sessions SET parent_session_id = tc.session_id, parent_message_id = tc.message_id,"
        " spawn_tool_call_id = tc.tool_call_id FROM (SELECT spawned_session_id, session_id,"
        " message_id, min(tool_call_id) AS tool_call_id FROM tool_calls WHERE session_id = ?"
        " AND spawned_session_id IS NOT NULL GROUP BY spawned_session_id) AS tc"
        f" WHERE sessions.session_id = tc.spawned_session_id AND {changed}",
        (session_id,),
    )
    conn.execute(
        "UPDATE sessions SET parent_session_id = tc.session_id, parent_message_id = tc.message_id,"
        " spawn_tool_call_id = tc.tool_call_id FROM (SELECT session_id, message_id, tool_call_id"
        " FROM tool_calls WHERE spawned_session_id = ? ORDER BY tool_call_id LIMIT 1) AS tc"
        f" WHERE sessions.session_id = ? AND {changed}",
        (session_id, session_id),
    )


def _save_watermarks(
    conn: sqlite3.Connection, watermarks: tuple[WatermarkUpdate, ...], run_id: str
) -> None:
    for wm in watermarks:
        save_watermark(conn, wm, run_id)


def save_watermark(conn: sqlite3.Connection, wm: WatermarkUpdate, run_id: str) -> None:
    state = None if wm.state is None else canonical_json(dict(wm.state)).decode()
    conn.execute(
        "INSERT INTO watermarks VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (source_provider, unit_key)"
        " DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at,"
        " run_id = excluded.run_id, state = excluded.state"
        " WHERE watermarks.cursor IS NOT excluded.cursor OR watermarks.state IS NOT excluded.state",
        (
            wm.source_provider,
            wm.unit_key,
            canonical_json(dict(wm.cursor)).decode(),
            now_iso(),
            run_id,
            state,
        ),
    )


def save_reject(conn: sqlite3.Connection, run_id: str, reject: Reject, now: str) -> None:
    rid = stable_id("rej", reject.source_provider, reject.unit_key, reject.location)
    conn.execute(
        "INSERT INTO rejects VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (reject_id) DO UPDATE SET"
        " run_id = excluded.run_id, reason = excluded.reason, raw_excerpt = excluded.raw_excerpt,"
        " created_at = excluded.created_at",
        (
            rid,
            run_id,
            reject.source_provider,
            reject.unit_key,
            reject.location,
            reject.reason,
            reject.raw_excerpt,
            now,
        ),
    )


def ensure_run(conn: sqlite3.Connection, run_id: str, mode: str) -> None:
    conn.execute(
        "INSERT INTO import_runs (run_id, mode, started_at, imported, upserted, skipped, failed,"
        " rejects, bytes_read, rows_written, retries, dedupe_hits, host, importer_version)"
        " VALUES (?, ?, ?, 0, 0, 0, 0, 0, 0, 0, 0, 0, ?, ?) ON CONFLICT (run_id) DO NOTHING",
        (run_id, mode, now_iso(), socket.gethostname(), __version__),
    )


def _add_run_counts(conn: sqlite3.Connection, run_id: str, response: ImportResponse) -> None:
    conn.execute(
        "UPDATE import_runs SET imported = imported + ?, upserted = upserted + ?,"
        " skipped = skipped + ?, failed = failed + ?, rows_written = rows_written + ?"
        " WHERE run_id = ?",
        (
            response.count("imported"),
            response.count("upserted"),
            response.count("skipped"),
            response.count("failed"),
            response.rows_written,
            run_id,
        ),
    )


def recovered(session: Mapping[str, Any]) -> bool:
    """A session rebuilt from a secondary record (a prompt history), not from its transcript."""
    metadata = session.get("metadata")
    if isinstance(metadata, str):
        return '"recovered_from"' in metadata
    return isinstance(metadata, dict) and bool(metadata.get("recovered_from"))
