"""The search syntax: parsed once, escaped for FTS5, and meaning the same as the plain-text
`matches` that the brute-force tests use (checked against FTS5 itself on random documents)."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracehouse.search.query import QueryError, Term, matches, parse, to_fts5, words_of
from tracehouse.search.sqlite_index import TOKENIZE


def test_words_phrases_exclusions_or_and_prefixes():
    q = parse('fix "flaky migration" -sqlite a OR b migrat*')
    assert q.groups == (
        (Term(("fix",), text="fix"),),
        (Term(("flaky", "migration"), text="flaky migration"),),
        (Term(("a",), text="a"), Term(("b",), text="b")),
        (Term(("migrat",), prefix=True, text="migrat"),),
    )
    assert q.excluded == (Term(("sqlite",), text="sqlite"),)


def test_punctuation_makes_a_phrase_of_the_words():
    for typed, words in [
        ("billing/webhooks.py", ("billing", "webhooks", "py")),
        ("--dry-run", ("dry", "run")),
        ("rotate_key", ("rotate", "key")),
    ]:
        assert parse(typed).groups == ((Term(words, text=typed),),)
    assert words_of("Café_Crème") == ["cafe", "creme"]


@pytest.mark.parametrize("text", ["", "   ", "-only -exclusions", '""', "OR", "*"])
def test_a_query_with_nothing_to_look_for_is_a_clear_error(text):
    with pytest.raises(QueryError):
        parse(text)


def test_fts5_expressions_quote_every_term():
    assert to_fts5(parse('a OR b "c d" -e f*')) == '(("a" OR "b") AND "c d" AND "f"*) NOT "e"'


def _fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZE}')")
    return conn


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_typed_text_is_a_query_or_a_clear_error_never_an_fts5_error(text):
    conn = _fts()
    conn.execute("INSERT INTO t (body) VALUES ('some text')")
    try:
        query = parse(text)
    except QueryError:
        return
    conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (to_fts5(query),)).fetchall()


VOCAB = ["alpha", "beta", "gamma", "delta", "Alpha", "app.py", "rotate_key", "--dry-run"]
SEPARATORS = [" ", "/", ".", "_", "-", ", ", "\n", "(", '"']


@st.composite
def documents(draw):  # type: ignore[no-untyped-def]
    words = draw(st.lists(st.sampled_from(VOCAB), min_size=0, max_size=6))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(words), max_size=len(words)))
    return "".join(w + s for w, s in zip(words, seps, strict=True))


@st.composite
def queries(draw):  # type: ignore[no-untyped-def]
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        word = draw(st.sampled_from([*VOCAB, "alp*", "gam*", '"alpha beta"', '"beta gamma"']))
        parts.append(("-" if draw(st.booleans()) and parts else "") + word)
        if draw(st.booleans()):
            parts.append("OR")
    return " ".join(parts)


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(documents(), min_size=1, max_size=8), text=queries())
def test_matches_means_what_fts5_finds(docs, text):
    try:
        query = parse(text)
    except QueryError:
        return
    conn = _fts()
    conn.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", list(enumerate(docs, 1)))
    found = {r for (r,) in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (to_fts5(query),))}
    expected = {i for i, doc in enumerate(docs, 1) if matches(query, doc)}
    assert found == expected, (text, docs)
