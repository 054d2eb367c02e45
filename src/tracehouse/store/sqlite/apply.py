"""Applying a batch's items on SQLite: each session's row and rows, lineage, label, threads,
watermarks and history, in the order DESIGN §4 gives. `writer.import_batch` runs them."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracehouse.model.columns import Table
from tracehouse.model.contract import (
    ImportBatch,
    ImportItem,
    ItemResult,
    Status,
    WatermarkUpdate,
)
from tracehouse.model.tables import CONTENT_TABLES, SESSIONS
from tracehouse.search import sqlite_index
from tracehouse.store.items import (
    HISTORY_COLUMNS,
    MIGRATION,
    RECOVERED_ROWS,
    Existing,
    decide,
    deleted_reason,
    history_values,
    missing_at,
    session_upsert_sql,
    session_values,
    supersedes,
    watermark_values,
    written,
)
from tracehouse.store.labels import claim_label, rewrite_threads
from tracehouse.store.sqlite import usage_slots
from tracehouse.store.sqlite.binds import placeholder


def _upsert_sql(table: Table) -> str:
    names = table.names
    keys = ", ".join(table.primary_key)
    updates = [f"{n} = excluded.{n}" for n in names if n not in table.primary_key]
    return (
        f"INSERT INTO {table.name} ({', '.join(names)})"
        f" VALUES ({', '.join(placeholder(table, n) for n in names)})"
        f" ON CONFLICT ({keys}) DO UPDATE SET {', '.join(updates)}"
        f" WHERE {table.name}.fingerprint IS NOT excluded.fingerprint"
    )


class Statements:
    """SQL built once per store from the table declarations (sqlite3 caches the prepared forms)."""

    def __init__(self) -> None:
        self.content = {t.name: _upsert_sql(t) for t in CONTENT_TABLES.values()}
        self.session = session_upsert_sql(", ".join("?" * len(SESSIONS.names)))


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


@dataclass
class Items:
    """A batch's items, applied in order against the sessions stored before the batch."""

    conn: sqlite3.Connection
    sql: Statements
    batch: ImportBatch
    partitions: Mapping[str, Slices]
    host: str
    now: str
    deleted: set[str]

    def apply(
        self, existing: dict[str, Existing], *, isolated: bool
    ) -> tuple[list[ItemResult], list[ImportItem]]:
        """Each item's result, and the items that failed. Not `isolated`, a store error is
        raised as it comes, for the caller to roll the batch back; `isolated`, each item runs
        in a savepoint of its own and a store error fails that item alone."""
        results: list[ItemResult] = []
        failed: list[ImportItem] = []
        for item in self.batch.items:
            before = existing.get(item.session_id)
            result = self._apply_one(item, before, isolated)
            if result.status in ("imported", "upserted"):  # a repeat later in the batch: skip
                existing[item.session_id] = written(item, before, self.now)
            elif result.status == "failed":
                failed.append(item)
            results.append(result)
        return results, failed

    def _apply_one(self, item: ImportItem, before: Existing | None, isolated: bool) -> ItemResult:
        if not isolated:
            return _apply_item(self, item, before)
        self.conn.execute("SAVEPOINT item")
        try:
            result = _apply_item(self, item, before)
        except sqlite3.Error as exc:
            self.conn.execute("ROLLBACK TO item")
            self.conn.execute("RELEASE item")
            ident = (item.source_provider, item.source_session_id, _shown_label(item, before))
            return ItemResult(*ident, "failed", f"store: {exc}")
        self.conn.execute("RELEASE item")
        return result


def _shown_label(item: ImportItem, existing: Existing | None) -> Any:
    """The label the session goes by: the store's once it holds the session, else the item's."""
    return existing.label if existing is not None and existing.label else item.session.get("label")


def _apply_item(items: Items, item: ImportItem, existing: Existing | None) -> ItemResult:
    conn, sql, batch, partitions = items.conn, items.sql, items.batch, items.partitions
    host, now = items.host, items.now
    deleted = item.session_id in items.deleted
    label = _shown_label(item, existing)
    action = decide(item, existing, batch.mode, deleted)
    if action != "write":
        if action == "refresh":  # the source came back (or, copied, is gone)
            conn.execute(
                "UPDATE sessions SET source_missing_at = ? WHERE session_id = ?",
                (missing_at(item, batch.mode), item.session_id),
            )
        save_watermarks(conn, item.watermarks, batch.run_id)
        reason = deleted_reason(item) if action == "deleted" else None
        ident = (item.source_provider, item.source_session_id, label)
        return ItemResult(*ident, "skipped", reason)

    if supersedes(item, existing):
        for table in RECOVERED_ROWS:
            delete_rows(
                conn,
                table,
                "session_id = ? AND json_extract(metadata, '$.recovered_from') IS NOT NULL",
                (item.session_id,),
            )
    if existing is not None:  # a new session's rows cannot be stored yet: ids name it
        sqlite_index.before_replace(conn, "sessions", item.session_id)
        usage_slots.session_out(conn, item.session_id)
    rows_written = conn.execute(
        sql.session, session_values(item, existing, batch.mode, host, now)
    ).rowcount
    for name, slices in partitions.items():
        rows = slices.rows(item.session_id)
        if rows is not None:
            if existing is not None:
                sqlite_index.before_rewrite(conn, name, rows, slices.table.names)
            rows_written += conn.executemany(sql.content[name], rows).rowcount
    usage_slots.session_in(conn, item.session_id)
    rows_written += _resolve_links(conn, item.session_id)
    if existing is None:
        label = claim_label(SqliteTx(conn), dict(item.session), now)
    if partitions["turns"].rows(item.session_id) is not None:
        rewrite_threads(SqliteTx(conn), item.session_id)
    save_watermarks(conn, item.watermarks, batch.run_id)
    if batch.mode != MIGRATION:  # a copy carries the history it was copied with
        conn.execute(
            f"INSERT INTO session_history VALUES ({', '.join('?' * len(HISTORY_COLUMNS))})"
            " ON CONFLICT (history_id) DO NOTHING",
            history_values(item, existing, batch.run_id, rows_written, now),
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
    # Several children may name one call (two reviews created at the same millisecond both
    # fall in its window): the call names the one with the smallest id, whichever came first;
    # a call its parent's own log linked is never taken over.
    changed_rows = conn.execute(
        "UPDATE tool_calls SET spawned_session_id = ?, spawned_source_session_id ="
        " (SELECT source_session_id FROM sessions WHERE session_id = ?) WHERE tool_call_id ="
        " (SELECT spawn_tool_call_id FROM sessions WHERE session_id = ?)"
        " AND (spawned_session_id IS NULL OR (spawned_session_id > ? AND tool_call_id ="
        " (SELECT spawn_tool_call_id FROM sessions AS held"
        " WHERE held.session_id = tool_calls.spawned_session_id)))",
        (session_id, session_id, session_id, session_id),
    ).rowcount
    changed_rows += conn.execute(
        "UPDATE tool_calls SET spawned_session_id = s.session_id,"
        " spawned_source_session_id = s.source_session_id FROM sessions AS s"
        " WHERE tool_calls.session_id = ? AND s.spawn_tool_call_id = tool_calls.tool_call_id"
        " AND s.session_id = (SELECT min(session_id) FROM sessions AS named"
        " WHERE named.spawn_tool_call_id = tool_calls.tool_call_id)"
        " AND tool_calls.spawned_session_id IS NULL",
        (session_id,),
    ).rowcount
    # Each child that names its call takes its parent message from it, the one the call names
    # and the others alike.
    changed_rows += conn.execute(
        "UPDATE sessions SET parent_message_id = tc.message_id, parent_source_message_id ="
        " (SELECT source_message_id FROM messages AS m WHERE m.message_id = tc.message_id)"
        " FROM tool_calls AS tc WHERE tc.tool_call_id = sessions.spawn_tool_call_id"
        " AND tc.session_id = sessions.parent_session_id"
        # both sides on `sessions`, so each uses its index (an OR across the two tables
        # scanned every session once an item: a first load's cost grew with the square)
        " AND (sessions.session_id = ? OR sessions.parent_session_id = ?)"
        " AND (sessions.parent_message_id IS NOT tc.message_id OR"
        " sessions.parent_source_message_id IS NOT (SELECT source_message_id FROM messages AS m"
        " WHERE m.message_id = tc.message_id))",
        (session_id, session_id),
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


def save_watermarks(
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


class SqliteTx:
    """The open transaction, as `store/tombstones.py` writes through it."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any]) -> int:
        return self.conn.execute(sql, tuple(params)).rowcount

    def query(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, tuple(params)).fetchall()

    def delete_rows(self, table: str, where: str, params: Sequence[Any]) -> int:
        return delete_rows(self.conn, table, where, params)


def delete_rows(conn: sqlite3.Connection, table: str, where: str, params: Sequence[Any]) -> int:
    """`DELETE FROM table WHERE where`, keeping the search index and the usage rollup true."""
    usage_slots.before_delete(conn, table, where, params)
    return sqlite_index.delete_rows(conn, table, where, params)
