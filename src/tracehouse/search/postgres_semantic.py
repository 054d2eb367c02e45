"""Search by meaning on PostgreSQL: the nearest passages' rows, filtered and made into hits,
through the same filters and columns as a lexical hit there (`postgres_query.SOURCES`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tracehouse.search import postgres_vectors, semantic
from tracehouse.search.hits import Hit, SearchFilters, conditions, row_hit
from tracehouse.search.postgres_query import SOURCES, Source

if TYPE_CHECKING:
    from tracehouse.search.embedders import Embedder
    from tracehouse.search.postgres_vectors import BlockCache, Tx

_SOURCE = dict(zip(("content", "thinking", "tool", "title"), SOURCES, strict=True))


def search(
    tx: Tx,
    embedder: Embedder,
    text: str,
    filters: SearchFilters,
    cache: BlockCache,
    lexical: Callable[[SearchFilters], list[Hit]] | None = None,
) -> list[Hit]:
    """By meaning; with `lexical` (the same query's lexical search), hybrid."""
    return semantic.answer(
        embedder,
        text,
        filters,
        lambda query: postgres_vectors.nearest(tx, query, cache),
        lambda score_of, wanted: _hits(tx, score_of, wanted),
        lambda at: postgres_vectors.passage_text(tx, at[0], str(at[1]), at[2]),
        lexical,
    )


def _hits(tx: Tx, score_of: dict[int, float], filters: SearchFilters) -> list[semantic.Found]:
    best = semantic.best_rows(postgres_vectors.places(tx, list(score_of)), score_of)
    out: list[semantic.Found] = []
    for name, rows in best.items():
        source = _SOURCE[name]
        found = conditions(
            filters, source.kind, table=source.table, alias=source.alias, at=source.at
        )
        if found is None:
            continue
        where, params = found
        for row in tx.rows(_sql(source, where), [list(rows), *params]):
            score, part, key = rows[row[0]]
            out.append((row_hit(source.kind, row, round(score, 6)), (name, row[0], part), key))
    return out


def _sql(source: Source, where: str) -> str:
    a = source.alias
    join = (
        f" JOIN sessions s ON s.session_id = {a}.session_id" if source.table != "sessions" else ""
    )
    return (
        f"SELECT {source.select}, s.session_id AS sid, s.label, s.source_provider, s.project"
        f" FROM {source.table} {a}{join} WHERE {a}.{source.key} = ANY(?){where}"
    )
