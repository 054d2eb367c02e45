"""Search on PostgreSQL: the generated tsvector columns of migration 0003, with GIN indexes.

PostgreSQL has no BM25: hits are ranked by `ts_rank` (term frequency, normalised by document
length), ties newest first. Highlights come from `ts_headline`, run on the best rows only.
"""

from __future__ import annotations

from collections.abc import Callable
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
from tracehouse.search.query import Query, to_tsquery_sql

Run = Callable[[str, list[Any]], list[dict[str, Any]]]
HEADLINE = (
    f"StartSel={MARK[0]}, StopSel={MARK[1]}, MaxWords={SNIPPET_WORDS},"
    f" MinWords={SNIPPET_WORDS // 2}, ShortWord=0, FragmentDelimiter=…, MaxFragments=1"
)


@dataclass(frozen=True)
class Source:
    kind: str | None
    table: str
    alias: str
    vector: str
    text: str  # what the snippet is cut from
    at: str
    select: str


SOURCES = (
    Source(None, "messages", "m", "m.content_tsv", "m.content", "created_at",
           MESSAGE_COLUMNS),
    Source("thinking", "messages", "m", "m.thinking_tsv", "m.thinking", "created_at",
           MESSAGE_COLUMNS),
    Source("tool", "tool_calls", "t", "t.search_tsv",
           "concat_ws(' ', t.params::text, t.result, t.error)", "started_at",
           CALL_COLUMNS),
    Source("title", "sessions", "s", "s.search_tsv",
           "concat_ws(' ', s.title, s.task_description)", "updated_at",
           SESSION_COLUMNS),
)  # fmt: skip


def search(run: Run, query: Query, filters: SearchFilters) -> list[Hit]:
    tsquery, tsparams = to_tsquery_sql(query)
    hits: list[Hit] = []
    for source in SOURCES:
        found = conditions(
            filters, source.kind, table=source.table, alias=source.alias, at=source.at
        )
        if found is None:
            continue
        where, params = found
        join = (
            ""
            if source.table == "sessions"
            else f" JOIN sessions s ON s.session_id = {source.alias}.session_id"
        )
        sql = (
            f"SELECT hit.*, ts_headline('simple', left(hit.body, 200000), q.q, ?) AS snippet"
            f" FROM (SELECT {source.select}, s.label, s.source_provider, s.project,"
            f" s.session_id AS sid, {source.text} AS body,"
            f" ts_rank({source.vector}, q.q) AS score"
            f" FROM {source.table} {source.alias}{join}, (SELECT {tsquery} AS q) q"
            f" WHERE {source.vector} @@ q.q{where}"
            f" ORDER BY score DESC, hit_at DESC LIMIT ?) hit, (SELECT {tsquery} AS q) q"
        )
        rows = run(sql, [HEADLINE, *tsparams, *params, filters.limit, *tsparams])
        hits.extend(_hit(source, row) for row in rows)
    return merge(hits, filters.limit)


def _hit(source: Source, row: dict[str, Any]) -> Hit:
    kind = source.kind or row["message_type"]
    return Hit(
        kind=kind,
        id=row["id"],
        message_id=row["message_id"],
        session_id=row["sid"],
        label=row["label"],
        provider=row["source_provider"],
        project=row["project"],
        created_at=row["hit_at"],
        snippet=" ".join((row["snippet"] or "").split()),
        score=float(row["score"]),
        tool_name=row["tool_name"],
    )
