"""Search on SQLite: the FTS5 indexes of `sinks/sqlite/search_index.py`, ranked by BM25.

Each source of hits (message text, thinking, tool calls, session titles) is asked for its best
`limit` rows with the filters applied inside the same statement; snippets are then made for
those rows alone, since FTS5 would otherwise build one for every match before the sort.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from tracehouse.search.hits import (
    CALL_COLUMNS,
    MARK,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    SNIPPET_WORDS,
    Hit,
    SearchFilters,
    conditions,
    merge,
)
from tracehouse.search.query import Query, to_fts5

OWNER = "s.session_id, s.label, s.source_provider, s.project"


@dataclass(frozen=True)
class Source:
    kind: str | None  # None: the kind comes from the message type
    fts: str
    table: str
    alias: str
    columns: str | None  # the FTS5 column filter, e.g. "{content}"
    weights: str  # bm25 column weights
    snippet_column: int  # -1: FTS5 picks the best column
    at: str  # the time column
    select: str  # the row's own columns to return


SOURCES = (
    Source(None, "messages_fts", "messages", "m", "{content}", "1.0, 0.0", 0, "created_at",
           MESSAGE_COLUMNS),
    Source("thinking", "messages_fts", "messages", "m", "{thinking}", "0.0, 1.0", 1, "created_at",
           MESSAGE_COLUMNS),
    Source("tool", "tool_calls_fts", "tool_calls", "t", None, "2.0, 1.0, 1.0, 1.0", -1,
           "started_at", CALL_COLUMNS),
    Source("title", "sessions_fts", "sessions", "s", None, "1.0, 0.5", -1, "updated_at",
           SESSION_COLUMNS),
)  # fmt: skip


def search(conn: sqlite3.Connection, query: Query, filters: SearchFilters) -> list[Hit]:
    match = to_fts5(query)
    hits: list[Hit] = []
    for source in SOURCES:
        found = conditions(
            filters, source.kind, table=source.table, alias=source.alias, at=source.at
        )
        if found is None:
            continue
        where, params = found
        expression = f"{source.columns} : ({match})" if source.columns else match
        join = (
            " JOIN sessions s ON s.rowid = f.rowid"
            if source.table == "sessions"
            else f" JOIN {source.table} {source.alias} ON {source.alias}.rowid = f.rowid"
            f" JOIN sessions s ON s.session_id = {source.alias}.session_id"
        )
        sql = (
            f"SELECT f.rowid AS rid, -bm25({source.fts}, {source.weights}) AS score,"
            f" {source.select}, {OWNER}"
            f" FROM {source.fts} f{join} WHERE {source.fts} MATCH ?{where}"
            f" ORDER BY score DESC, hit_at DESC LIMIT ?"
        )
        rows = conn.execute(sql, [expression, *params, filters.limit]).fetchall()
        hits.extend(_hit(conn, source, expression, row) for row in rows)
    return merge(hits, filters.limit)


def _hit(conn: sqlite3.Connection, source: Source, expression: str, row: Any) -> Hit:
    rid, score, hit_id, message_id, message_type, created_at, tool_name = row[:7]
    session_id, label, provider, project = row[7:]
    (snippet,) = conn.execute(
        f"SELECT snippet({source.fts}, ?, ?, ?, '…', ?) FROM {source.fts}"
        f" WHERE {source.fts} MATCH ? AND rowid = ?",
        (source.snippet_column, *MARK, SNIPPET_WORDS, expression, rid),
    ).fetchone()
    kind = source.kind or message_type
    return Hit(
        kind=kind,
        id=hit_id,
        message_id=message_id,
        session_id=session_id,
        label=label,
        provider=provider,
        project=project,
        created_at=created_at,
        snippet=" ".join((snippet or "").split()),
        score=float(score),
        tool_name=tool_name,
    )
