"""Search by meaning on SQLite: the nearest passages' rows, filtered and made into hits.

Every vector is scored (`sqlite_vectors.nearest`); the best text keys are placed in the ledger
(a text can stand in many rows) and joined to their rows through the same filters and columns
as a lexical hit (`sqlite_query.joined`), as many at a time as `semantic.best_hits` asks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from tracehouse.search import semantic, sqlite_vectors
from tracehouse.search.hits import Hit, SearchFilters, conditions
from tracehouse.search.sqlite_query import SOURCES, Source, joined

if TYPE_CHECKING:
    from tracehouse.search.embedders import Embedder

# The lexical sources by the name a passage gives its source.
_SOURCE = dict(zip(("content", "tool", "thinking", "title"), SOURCES, strict=True))


def search(
    conn: sqlite3.Connection,
    embedder: Embedder,
    text: str,
    filters: SearchFilters,
    lexical: Callable[[SearchFilters], list[Hit]] | None = None,
) -> list[Hit]:
    """By meaning; with `lexical` (the same query's lexical search), hybrid."""
    return semantic.answer(
        embedder,
        text,
        filters,
        lambda query: sqlite_vectors.nearest(conn, query),
        lambda score_of, wanted: _hits(conn, score_of, wanted),
        lambda at: sqlite_vectors.passage_text(conn, at[0], int(at[1]), at[2]),
        lexical,
    )


def _hits(
    conn: sqlite3.Connection, score_of: dict[int, float], filters: SearchFilters
) -> list[semantic.Found]:
    best = semantic.best_rows(sqlite_vectors.places(conn, list(score_of)), score_of)
    out: list[semantic.Found] = []
    for name, rows in best.items():
        source = _SOURCE[name]
        found = conditions(
            filters, source.kind, table=source.table, alias=source.alias, at=source.at
        )
        if found is None:
            continue
        where, params = found
        scores = {int(rid): score for rid, (score, _, _) in rows.items()}
        for row in joined(conn, source, scores, where, params):
            _, part, key = rows[row[0]]
            out.append((_hit(source, row), (name, row[0], part), key))
    return out


def _hit(source: Source, row: tuple[object, ...]) -> Hit:
    _, score, hit_id, message_id, message_type, created_at, tool_name = row[:7]
    session_id, label, provider, project = row[7:]
    return Hit(
        kind=str(source.kind or message_type),
        id=str(hit_id),
        message_id=None if message_id is None else str(message_id),
        session_id=str(session_id),
        label=str(label),
        provider=str(provider),
        project=None if project is None else str(project),
        created_at=None if created_at is None else str(created_at),
        snippet="",
        score=round(float(score), 6),  # type: ignore[arg-type]
        tool_name=None if tool_name is None else str(tool_name),
    )
