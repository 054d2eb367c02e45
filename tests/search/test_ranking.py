"""Both backends' bounded ranking returns what ranking every match would: for any page size and
filter, a search's hits are the first hits of the unlimited search, ties at the cut included
(rows of identical text score alike and are ordered newest first). PostgreSQL ranks a source's
newest matches only: past that bound, its hits are the ranking of exactly those."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.pg import PgServer
from tests.store.factory import batch, item
from tracehouse.model.wire import ms_from_iso as ms
from tracehouse.search import postgres_query as postgres
from tracehouse.search.hits import MARK, Hit, SearchFilters
from tracehouse.search.query import parse
from tracehouse.search.snippets import snippet
from tracehouse.store import SessionStore, open_store


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SessionStore]:
    if request.param == "postgresql":
        server: PgServer = request.getfixturevalue("pg_server")
        schema = server.create_schema()
        store = open_store(server.dsn_for(schema))
    else:
        store = open_store(tmp_path_factory.mktemp("rank") / "l.db")
    items = []
    for n in range(60):  # identical texts in many sessions: ties everywhere
        provider = "codex" if n % 3 == 0 else "claude-code"
        text = "shared words" if n % 2 else "shared words and more shared words"
        raw = item(f"s{n:02d}", 4, text=text, title=f"shared title {n % 4}")
        raw["sourceProvider"] = provider
        for i, message in enumerate(raw["messages"]):
            message["createdAtMs"] = ms(f"2026-01-{1 + n % 28:02d}T00:00:{i:02d}.000Z")
        items.append(raw)
    assert store.import_batch(batch(items)).ok
    yield store
    store.close()
    if request.param == "postgresql":
        server.drop_schema(schema)


FILTERS = [
    {},
    {"providers": ("codex",)},
    {"kinds": ("assistant",)},
    {"since": "2026-01-20T00:00:00.000Z"},
]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    limit=st.integers(1, 120),
    query=st.sampled_from(["shared", "words", "shar*", "shared -more", '"shared words"']),
    where=st.sampled_from(FILTERS),
)
def test_a_page_is_the_head_of_the_whole_ranking(store, limit, query, where) -> None:  # type: ignore[no-untyped-def]
    everything = store.search(query, SearchFilters(limit=10_000, **where))
    page = store.search(query, SearchFilters(limit=limit, **where))
    assert [(h.kind, h.id) for h in page] == [(h.kind, h.id) for h in everything[:limit]]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ranked=st.integers(1, 80),
    limit=st.integers(1, 60),
    query=st.sampled_from(["shared", "shar*", "shared -more", "title"]),
    where=st.sampled_from(FILTERS),
)
def test_postgresql_ranks_the_newest_matches_of_each_source(  # type: ignore[no-untyped-def]
    store, ranked, limit, query, where
) -> None:
    if store.backend != "postgresql":
        pytest.skip("the bound is PostgreSQL's")
    everything = store.search(query, SearchFilters(limit=10_000, **where))
    newest: list[Hit] = []
    for source in ("message", "thinking", "tool", "title"):
        hits = [h for h in everything if _source(h) == source]
        hits.sort(key=lambda h: h.id)
        hits.sort(key=lambda h: h.created_at or "", reverse=True)
        newest.extend(hits[:ranked])
    expected = [(h.kind, h.id) for h in everything if h in newest][:limit]
    filters = SearchFilters(limit=limit, **where)
    page = postgres.search(store.query, parse(query), filters, ranked=ranked)
    assert [(h.kind, h.id) for h in page] == expected


def _source(hit: Hit) -> str:
    return hit.kind if hit.kind in ("thinking", "tool", "title") else "message"


def test_snippets_mark_every_term_around_the_first() -> None:
    text = "x " * 300 + "we call rotate_key before Deploying the build" + " y" * 300
    cut = snippet(text, parse("rotate_key deploy*"), 12)
    assert cut is not None and cut.startswith("…") and cut.endswith("…")
    assert f"{MARK[0]}rotate_key{MARK[1]}" in cut and f"{MARK[0]}Deploying{MARK[1]}" in cut
    assert len(cut.split()) <= 14


def test_a_snippet_needs_whole_words_and_leaves_folding_to_fts5() -> None:
    assert snippet("the rotatekey job", parse("rotate_key"), 12) is None
    assert snippet("un café noir", parse("cafe"), 12) is None  # FTS5 folds the accent
    assert snippet("short", parse("short"), 12) == f"{MARK[0]}short{MARK[1]}"
