"""Search on PostgreSQL: the generated tsvector columns of migration 0003, with GIN indexes.

PostgreSQL has no BM25: hits are ranked by `ts_rank` (term frequency), ties newest first. A GIN
index finds matches but cannot rank them: `ts_rank` reads each match's tsvector, which for a
tool output is TOASTed and compressed, about 10 µs a row. A common word's tens of thousands of
matches cost seconds that way, so each source ranks its newest RANKED matches that pass the
filters (finding them reads only the rows' times). A query with fewer matches, which is most
queries, is ranked over all of them; SQLite's ranking is exact for any count.

Snippets are cut in Python from the returned rows' text, as on SQLite (`ts_headline` parses
the whole text, up to 200 KB a hit); PostgreSQL is asked only when no word is found that way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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
)
from tracehouse.search.query import Query, to_tsquery_sql

Run = Callable[[str, list[Any]], list[dict[str, Any]]]
HEADLINE = (
    f"StartSel={MARK[0]}, StopSel={MARK[1]}, MaxWords={SNIPPET_WORDS},"
    f" MinWords={SNIPPET_WORDS // 2}, ShortWord=0, FragmentDelimiter=…, MaxFragments=1"
)
RANKED = 2000  # matches ranked per source at most: 20 ms of `ts_rank`


@dataclass(frozen=True)
class Source:
    kind: str | None  # None: the kind comes from the message type
    table: str
    alias: str
    key: str
    vector: str
    texts: tuple[str, ...]  # what a snippet is cut from, in order of preference
    at: str
    select: str


SOURCES = (
    Source(None, "messages", "m", "message_id", "content_tsv", ("m.content",), "created_at",
           MESSAGE_COLUMNS),
    Source("thinking", "messages", "m", "message_id", "thinking_tsv", ("m.thinking",),
           "created_at", MESSAGE_COLUMNS),
    Source("tool", "tool_calls", "t", "tool_call_id", "search_tsv",
           ("t.params::text", "t.result", "t.error", "t.tool_name"), "started_at",
           CALL_COLUMNS),
    Source("title", "sessions", "s", "session_id", "search_tsv",
           ("s.title", "s.task_description"), "updated_at", SESSION_COLUMNS),
)  # fmt: skip


def search(run: Run, query: Query, filters: SearchFilters, ranked: int = RANKED) -> list[Hit]:
    tsquery, tsparams = to_tsquery_sql(query)
    hits: list[Hit] = []
    for source in SOURCES:
        found = conditions(
            filters, source.kind, table=source.table, alias=source.alias, at=source.at
        )
        if found is None:
            continue
        where, params = found
        rows = run(
            _sql(source, tsquery, where),
            [*tsparams, *tsparams, *params, ranked, filters.limit],
        )
        hits.extend(_hit(run, source, query, tsquery, tsparams, row) for row in rows)
    return merge(hits, filters.limit)


def _sql(source: Source, tsquery: str, where: str) -> str:
    """The source's best rows among its newest `ranked` matches (ties at the cut: by id),
    ordered as `merge` orders hits: score, newest, kind, id."""
    a = source.alias
    join = (
        f" JOIN sessions s ON s.session_id = {a}.session_id" if source.table != "sessions" else ""
    )
    kind = "" if source.kind else 'c.message_type COLLATE "C", '
    texts = ", ".join(f"{text} AS text{i}" for i, text in enumerate(source.texts))
    return (
        f"SELECT c.*, {texts} FROM ("
        # the newest matches: their times come from the heap, their tsvectors are not read
        f"SELECT c.*, ts_rank({a}.{source.vector}, ({tsquery})) AS score FROM ("
        f"SELECT {source.select}, s.label, s.source_provider, s.project, s.session_id AS sid"
        f" FROM {source.table} {a}{join}"
        f" WHERE {a}.{source.vector} @@ ({tsquery}){where}"
        f' ORDER BY hit_at DESC NULLS LAST, {a}.{source.key} COLLATE "C" LIMIT ?) c'
        f" JOIN {source.table} {a} ON {a}.{source.key} = c.id"
        f' ORDER BY score DESC, c.hit_at DESC NULLS LAST, {kind}c.id COLLATE "C" LIMIT ?) c'
        f" JOIN {source.table} {a} ON {a}.{source.key} = c.id"
        f' ORDER BY c.score DESC, c.hit_at DESC NULLS LAST, {kind}c.id COLLATE "C"'
    )


def _hit(
    run: Run, source: Source, query: Query, tsquery: str, tsparams: list[str], row: dict[str, Any]
) -> Hit:
    texts = [row[f"text{i}"] for i in range(len(source.texts))]
    cut = snippets.first_snippet(texts, query, SNIPPET_WORDS, spelled=True)
    if cut is None:  # matched where no spelling is found (`ﬁ` for `fi`): PostgreSQL knows
        body = " ".join(t for t in texts if t)
        (found,) = run(
            f"SELECT ts_headline('simple', left(?, 200000), ({tsquery}), ?) AS cut",
            [body, *tsparams, HEADLINE],
        )
        cut = found["cut"]
    return Hit(
        kind=source.kind or row["message_type"],
        id=row["id"],
        message_id=row["message_id"],
        session_id=row["sid"],
        label=row["label"],
        provider=row["source_provider"],
        project=row["project"],
        created_at=row["hit_at"],
        snippet=" ".join((cut or "").split()),
        score=float(row["score"]),
        tool_name=row["tool_name"],
    )
