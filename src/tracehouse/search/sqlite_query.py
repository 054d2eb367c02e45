"""Search on SQLite: the FTS5 indexes of `search/sqlite_index.py`, ranked by BM25.

Each source of hits (message text, thinking, tool calls, session titles) is ranked in two
phases. BM25 over the index alone is cheap; joining every match to its ledger row (a page read
each, over a table of hundreds of MB) was what made a common word cost 130 ms. So the index
first gives its best candidates with their scores, and only those are joined, filtered and
ordered (ties: newest first). When the candidates cannot prove they hold the best hits (a filter
kept too few of them, or a tie straddles the cut), the source is ranked in one statement over
every match instead. Snippets are made for the rows returned alone.
"""

from __future__ import annotations

import queue
import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

import orjson

from tracehouse.search import snippets
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
    row_hit,
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
    texts: tuple[str, ...]  # the columns a snippet is cut from, in order of preference


SOURCES = (  # the costliest first, as threads take them in this order
    Source(None, "messages_fts", "messages", "m", "{content}", "1.0, 0.0", 0, "created_at",
           MESSAGE_COLUMNS, ("content",)),
    Source("tool", "tool_calls_fts", "tool_calls", "t", None, "2.0, 1.0, 1.0, 1.0", -1,
           "started_at", CALL_COLUMNS, ("params", "result", "error", "tool_name")),
    Source("thinking", "messages_fts", "messages", "m", "{thinking}", "0.0, 1.0", 1, "created_at",
           MESSAGE_COLUMNS, ("thinking",)),
    Source("title", "sessions_fts", "sessions", "s", None, "1.0, 0.5", -1, "updated_at",
           SESSION_COLUMNS, ("title", "task_description")),
)  # fmt: skip


# Candidates taken from the index when a filter will drop some of them: enough that a filter
# keeping one match in ten still fills a page of 20 hits.
FILTERED_CANDIDATES = 200


def search(
    readers: Sequence[sqlite3.Connection], query: Query, filters: SearchFilters
) -> list[Hit]:
    """Each source is ranked on a connection of its own, in threads (SQLite lets go of the GIL
    while it steps): a common word's sources cost the slowest of them, not their sum."""
    match = to_fts5(query)
    todo: queue.SimpleQueue[Source] = queue.SimpleQueue()
    for source in SOURCES:  # the costliest first: message text, tool calls, thinking, titles
        todo.put(source)

    def work(conn: sqlite3.Connection) -> list[Hit]:
        hits: list[Hit] = []
        while True:
            try:
                source = todo.get_nowait()
            except queue.Empty:
                return hits
            hits.extend(_search_source(conn, source, query, match, filters))

    if len(readers) == 1:
        return merge(work(readers[0]), filters.limit)
    with ThreadPoolExecutor(len(readers)) as pool:
        found = list(pool.map(work, readers))
    return merge([hit for hits in found for hit in hits], filters.limit)


def _search_source(
    conn: sqlite3.Connection, source: Source, query: Query, match: str, filters: SearchFilters
) -> list[Hit]:
    found = conditions(filters, source.kind, table=source.table, alias=source.alias, at=source.at)
    if found is None:
        return []
    where, params = found
    expression = f"{source.columns} : ({match})" if source.columns else match
    rows = _ranked(conn, source, expression, where, params, filters.limit)
    return [_hit(conn, source, query, expression, row) for row in rows]


def _ranked(
    conn: sqlite3.Connection,
    source: Source,
    expression: str,
    where: str,
    params: list[Any],
    limit: int,
) -> list[Any]:
    """The source's best `limit` rows: (rowid, score, select columns…, owner columns…)."""
    score = f"-bm25({source.fts}, {source.weights})"
    ranked = f"SELECT rowid, {score} AS score FROM {source.fts} WHERE {source.fts} MATCH ?"
    wanted = max(limit * 10, FILTERED_CANDIDATES) if where else limit
    top = conn.execute(f"{ranked} ORDER BY score DESC LIMIT ?", (expression, wanted + 1))
    candidates = top.fetchall()
    every_match = len(candidates) <= wanted
    if not every_match:
        cut = candidates[wanted - 1][1]
        if candidates[wanted][1] == cut:  # a tie straddles the cut: take all of it
            candidates = conn.execute(f"{ranked} AND {score} >= ?", (expression, cut)).fetchall()
        else:
            candidates = candidates[:wanted]
    # Every match left out scores below every candidate: the best `limit` candidates that pass
    # the filters are the best hits, ties broken among them alone.
    rows = joined(conn, source, dict(candidates), where, params)
    if every_match or len(rows) >= limit:
        return rows[:limit]
    return conn.execute(  # one statement over every match
        f"SELECT f.rowid AS rid, {score} AS score, {source.select}, {OWNER}"
        f" FROM {source.fts} f JOIN {source.table} {source.alias}"
        f" ON {source.alias}.rowid = f.rowid{_session(source)}"
        f" WHERE {source.fts} MATCH ?{where}"
        f" ORDER BY score DESC, hit_at DESC, {'message_type, ' if source.kind is None else ''}id"
        " LIMIT ?",
        [expression, *params, limit],
    ).fetchall()


def joined(
    conn: sqlite3.Connection,
    source: Source,
    scores: dict[int, float],
    where: str,
    params: list[Any],
) -> list[Any]:
    """The candidates' rows that pass the filters, best first (ties: newest first)."""
    if not scores:
        return []
    rows = conn.execute(
        # CROSS JOIN keeps the candidates the outer loop: the planner would otherwise scan a
        # filter's every row (all of a provider's calls) for the few candidates among them.
        f"SELECT {source.alias}.rowid AS rid, {source.select}, {OWNER}"
        f" FROM json_each(?) AS c CROSS JOIN {source.table} {source.alias}"
        f" ON {source.alias}.rowid = c.value{_session(source)} WHERE 1{where}",
        [orjson.dumps(list(scores)).decode(), *params],
    ).fetchall()
    ranked = [(row[0], scores[row[0]], *row[1:]) for row in rows]
    # As `merge` orders hits: score, the newest, then kind and id (stable sorts, last key first)
    ranked.sort(key=lambda row: (source.kind or row[4], row[2]))
    ranked.sort(key=lambda row: row[5] or "", reverse=True)
    ranked.sort(key=lambda row: row[1], reverse=True)
    return ranked


def _session(source: Source) -> str:
    """The join from the hit's row to its session (a title hit is the session's own row)."""
    if source.table == "sessions":
        return ""
    return f" JOIN sessions s ON s.session_id = {source.alias}.session_id"


def _hit(conn: sqlite3.Connection, source: Source, query: Query, expression: str, row: Any) -> Hit:
    cut = _snippet(conn, source, query, expression, row[0])
    return row_hit(source.kind, row[2:], row[1], " ".join((cut or "").split()))


def _snippet(
    conn: sqlite3.Connection, source: Source, query: Query, expression: str, rid: int
) -> str | None:
    texts = conn.execute(
        f"SELECT {', '.join(source.texts)} FROM {source.table} WHERE rowid = ?", (rid,)
    ).fetchone()
    cut = snippets.first_snippet(texts or (), query, SNIPPET_WORDS)
    if cut is not None:
        return cut
    (cut,) = conn.execute(  # matched through folding: FTS5 knows where
        f"SELECT snippet({source.fts}, ?, ?, ?, '…', ?) FROM {source.fts}"
        f" WHERE {source.fts} MATCH ? AND rowid = ?",
        (source.snippet_column, *MARK, SNIPPET_WORDS, expression, rid),
    ).fetchone()
    return cast(str | None, cut)
