"""`import_batch` on SQLite: DESIGN §4 in SQL.

The caller holds one transaction for the whole batch; each item runs inside its own savepoint, so a
failing item rolls back alone. Rows are upserted by id with `… DO UPDATE … WHERE fingerprint IS NOT
excluded.fingerprint`, so an unchanged row is never rewritten, and nothing is ever deleted.
"""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from tracehouse import __version__
from tracehouse.model.contract import (
    Clear,
    ImportBatch,
    ImportItem,
    ImportResponse,
    ItemResult,
    Reject,
    Status,
    WatermarkUpdate,
    now_iso,
)
from tracehouse.model.tables import CONTENT_TABLES, SESSIONS, Table
from tracehouse.sinks.items import (
    HISTORY_COLUMNS,
    MIGRATION,
    RECOVERED_ROWS,
    REJECT_COLUMNS,
    Existing,
    as_replayed,
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
from tracehouse.sinks.labels import claim_label, rewrite_threads
from tracehouse.sinks.sqlite import search_index


def _upsert_sql(table: Table) -> str:
    names = table.names
    keys = ", ".join(table.primary_key)
    updates = [f"{n} = excluded.{n}" for n in names if n not in table.primary_key]
    return (
        f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        f" ON CONFLICT ({keys}) DO UPDATE SET {', '.join(updates)}"
        f" WHERE {table.name}.fingerprint IS NOT excluded.fingerprint"
    )


class Statements:
    """SQL built once per store from the table declarations (sqlite3 caches the prepared forms)."""

    def __init__(self) -> None:
        self.content = {t.name: _upsert_sql(t) for t in CONTENT_TABLES.values()}
        self.session = session_upsert_sql(", ".join("?" * len(SESSIONS.names)))


def import_batch(
    conn: sqlite3.Connection, sql: Statements, batch: ImportBatch, *, index: bool = True
) -> ImportResponse:
    """With `index=False` the caller flushes the search index before it commits: once for a
    group of batches, FTS5 writes one segment instead of a small one per batch (the savepoints of
    the next batch's items push its pending terms out), and the group's indexing costs half."""
    key = batch.idempotency_key
    request_hash = batch.content_hash() if key else None
    if key and request_hash:
        stored = conn.execute(
            "SELECT request_hash, response FROM import_requests WHERE idempotency_key = ?", (key,)
        ).fetchone()
        response = replayed(key, request_hash, stored)
        if response is not None:
            # The replay is a run of its own in the log: every item skipped, a dedupe hit each.
            ensure_run(conn, batch.run_id, batch.mode)
            _add_run_counts(conn, batch.run_id, as_replayed(batch.run_id, response))
            return response

    ensure_run(conn, batch.run_id, batch.mode)
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
    results: list[ItemResult] = []
    failed: list[ImportItem] = []
    host = socket.gethostname()
    now = now_iso()
    for item in batch.items:
        before = existing.get(item.session_id)
        gone = item.session_id in deleted
        result = _apply_item(conn, sql, batch, item, before, partitions, host, now, gone)
        if result.status in ("imported", "upserted"):  # a repeat later in the batch is a skip
            existing[item.session_id] = written(item, before, now)
        elif result.status == "failed":
            failed.append(item)
        results.append(result)

    for wm in unit_cursors_to_save(batch.watermarks, failed):
        save_watermark(conn, wm, batch.run_id)
    resolve_rejects(conn, batch.clears, now)
    for reject in batch.rejects:
        save_reject(conn, batch.run_id, reject, now)

    if index:
        search_index.flush(conn)
    response = ImportResponse(batch.run_id, batch.in_request_order(results))
    _add_run_counts(conn, batch.run_id, response)
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


class Slices:
    """One table's rows to write, grouped by session (a session's rows keep their order)."""

    def __init__(self, table: Table, rows: list[tuple[Any, ...]], sessions: set[str]) -> None:
        self.table = table
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
    existing: Existing | None,
    partitions: Mapping[str, Slices],
    host: str,
    now: str,
    deleted: bool,
) -> ItemResult:
    label = existing.label if existing is not None and existing.label else item.session.get("label")
    action = decide(item, existing, batch.mode, deleted)
    conn.execute("SAVEPOINT item")
    try:
        if action != "write":
            if action == "refresh":  # the source came back (or, copied, is gone)
                conn.execute(
                    "UPDATE sessions SET source_missing_at = ? WHERE session_id = ?",
                    (missing_at(item, batch.mode), item.session_id),
                )
            _save_watermarks(conn, item.watermarks, batch.run_id)
            conn.execute("RELEASE item")
            reason = deleted_reason(item) if action == "deleted" else None
            ident = (item.source_provider, item.source_session_id, label)
            return ItemResult(*ident, "skipped", reason)

        if supersedes(item, existing):
            for table in RECOVERED_ROWS:
                search_index.delete_rows(
                    conn,
                    table,
                    "session_id = ? AND json_extract(metadata, '$.recovered_from') IS NOT NULL",
                    (item.session_id,),
                )
        if existing is not None:  # a new session's rows cannot be stored yet: ids name it
            search_index.before_replace(conn, "sessions", item.session_id)
        rows_written = conn.execute(
            sql.session, session_values(item, existing, batch.mode, host, now)
        ).rowcount
        for name, slices in partitions.items():
            rows = slices.rows(item.session_id)
            if rows is not None:
                if existing is not None:
                    search_index.before_rewrite(conn, name, rows, slices.table.names)
                rows_written += conn.executemany(sql.content[name], rows).rowcount
        rows_written += _resolve_links(conn, item.session_id)
        if existing is None:
            label = claim_label(SqliteTx(conn), dict(item.session), now)
        if partitions["turns"].rows(item.session_id) is not None:
            rewrite_threads(SqliteTx(conn), item.session_id)
        _save_watermarks(conn, item.watermarks, batch.run_id)
        if batch.mode != MIGRATION:  # a copy carries the history it was copied with
            conn.execute(
                f"INSERT INTO session_history VALUES ({', '.join('?' * len(HISTORY_COLUMNS))})"
                " ON CONFLICT (history_id) DO NOTHING",
                history_values(item, existing, batch.run_id, rows_written, now),
            )
        conn.execute("RELEASE item")
    except sqlite3.Error as exc:
        conn.execute("ROLLBACK TO item")
        conn.execute("RELEASE item")
        return ItemResult(
            item.source_provider, item.source_session_id, label, "failed", f"store: {exc}"
        )
    status: Status = "upserted" if existing is not None else "imported"
    return ItemResult(
        item.source_provider, item.source_session_id, label, status, None, rows_written
    )


def _resolve_links(conn: sqlite3.Connection, session_id: str) -> int:
    """Lineage from the spawning tool call, whichever of parent and child arrived first.

    A child that names its spawning call (a Codex review knows only the parent's call) first
    gives that call its `spawned_session_id`, from whichever side is being written; then every
    child takes parent, message and call from the call that spawned it. Returns rows changed."""
    changed_rows = conn.execute(
        "UPDATE tool_calls SET spawned_session_id = ?, spawned_source_session_id ="
        " (SELECT source_session_id FROM sessions WHERE session_id = ?) WHERE tool_call_id ="
        " (SELECT spawn_tool_call_id FROM sessions WHERE session_id = ?)"
        " AND spawned_session_id IS NULL",
        (session_id, session_id, session_id),
    ).rowcount
    changed_rows += conn.execute(
        "UPDATE tool_calls SET spawned_session_id = s.session_id,"
        " spawned_source_session_id = s.source_session_id FROM sessions AS s"
        " WHERE tool_calls.session_id = ? AND s.spawn_tool_call_id = tool_calls.tool_call_id"
        " AND tool_calls.spawned_session_id IS NULL",
        (session_id,),
    ).rowcount
    # A child that names its parent takes its link from that parent's calls only: another
    # session's call claiming it (a hostile import) cannot re-parent it.
    own = "(sessions.parent_session_id IS NULL OR sessions.parent_session_id = tc.session_id)"
    changed = (
        "(sessions.parent_session_id IS NOT tc.session_id"
        " OR sessions.parent_message_id IS NOT tc.message_id"
        " OR sessions.spawn_tool_call_id IS NOT tc.tool_call_id"
        " OR sessions.spawn_source_tool_call_id IS NOT tc.source_tool_call_id)"
    )
    # Each link also in its source-id spelling, as a producer would have named it.
    link = (
        "UPDATE sessions SET parent_session_id = tc.session_id, parent_message_id = tc.message_id,"
        " spawn_tool_call_id = tc.tool_call_id, spawn_source_tool_call_id = tc.source_tool_call_id,"
        " parent_source_session_id = (SELECT source_session_id FROM sessions AS p"
        " WHERE p.session_id = tc.session_id), parent_source_message_id ="
        " (SELECT source_message_id FROM messages AS m WHERE m.message_id = tc.message_id)"
    )
    changed_rows += conn.execute(
        f"{link} FROM (SELECT spawned_session_id, session_id, message_id,"
        " min(tool_call_id) AS tool_call_id, source_tool_call_id FROM tool_calls"
        " WHERE session_id = ? AND spawned_session_id IS NOT NULL GROUP BY spawned_session_id)"
        f" AS tc WHERE sessions.session_id = tc.spawned_session_id AND {own} AND {changed}",
        (session_id,),
    ).rowcount
    changed_rows += conn.execute(
        f"{link} FROM (SELECT session_id, message_id, tool_call_id, source_tool_call_id"
        " FROM tool_calls WHERE spawned_session_id = ? AND coalesce((SELECT parent_session_id"
        " FROM sessions WHERE session_id = ?), session_id) = session_id"
        " ORDER BY tool_call_id LIMIT 1) AS tc"
        f" WHERE sessions.session_id = ? AND {changed}",
        (session_id, session_id, session_id),
    ).rowcount
    return changed_rows


def _save_watermarks(
    conn: sqlite3.Connection, watermarks: tuple[WatermarkUpdate, ...], run_id: str
) -> None:
    for wm in watermarks:
        save_watermark(conn, wm, run_id)


def save_watermark(conn: sqlite3.Connection, wm: WatermarkUpdate, run_id: str) -> None:
    conn.execute(
        "INSERT INTO watermarks VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (source_provider, unit_key)"
        " DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at,"
        " run_id = excluded.run_id, state = excluded.state"
        " WHERE watermarks.cursor IS NOT excluded.cursor OR watermarks.state IS NOT excluded.state",
        watermark_values(wm, run_id),
    )


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
    conn: sqlite3.Connection, run_id: str, mode: str, started_at: str | None = None
) -> None:
    conn.execute(
        "INSERT INTO import_runs (run_id, mode, started_at, imported, upserted, skipped, failed,"
        " rejects, bytes_read, rows_written, retries, dedupe_hits, host, importer_version)"
        " VALUES (?, ?, ?, 0, 0, 0, 0, 0, 0, 0, 0, 0, ?, ?) ON CONFLICT (run_id) DO NOTHING",
        (run_id, mode, started_at or now_iso(), socket.gethostname(), __version__),
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


class SqliteTx:
    """The open transaction, as `sinks/deletion.py` writes through it."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any]) -> int:
        return self.conn.execute(sql, tuple(params)).rowcount

    def query(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def delete_rows(self, table: str, where: str, params: Sequence[Any]) -> int:
        return search_index.delete_rows(self.conn, table, where, params)
