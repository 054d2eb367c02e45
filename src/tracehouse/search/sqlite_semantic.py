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
from tracehouse.search.hits import Hit, SearchFilters, conditions, row_hit
from tracehouse.search.sqlite_query import SOURCES, joined

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
            out.append((row_hit(source.kind, row[2:], round(row[1], 6)), (name, row[0], part), key))
    return out
