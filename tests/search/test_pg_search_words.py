"""The words PostgreSQL's writer prepares for `to_tsvector` (`search/postgres_words.py`):
they are the words a query looks for (`words_of`), whatever the text holds, and migration 0012
keeps every tsvector an older ledger stored."""

from __future__ import annotations

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.store.factory import batch, item
from tracehouse.search.postgres_words import LIMIT, search_text
from tracehouse.search.query import words_of
from tracehouse.store.postgres.migrations import RECORD_TABLE, known_migrations
from tracehouse.store.postgres.store import PostgresStore

# Letters with and without accents, decomposed accents, Thai and Devanagari marks, ligatures,
# full-width and Greek letters, CJK, arrows and dashes, emoji with variation selectors, and
# every ASCII character.
ALPHABET = st.sampled_from(
    [chr(c) for c in range(128)]
    + list("éÉçñüßøłİıΣσςΟΔΑ日本語テキ→—“”’│├─…•✓ℹ️²Ⅷﬁ𝔘😀\u0301\u0308\u0e48\u094d\u200d\ufe0f")
    + ["ใส่", "เช่น", "दर्ज", "Ｆｕｌｌ", "ΟΔΟΣ", "aΣ", "Σa", "a.Σ"]
)
TEXTS = st.lists(ALPHABET, max_size=60).map("".join)


def _as_indexed(words: list[str]) -> list[str]:
    # `to_tsvector` lower-cases (`words_of` lower-cases before it decomposes, so 𝔘 is U)
    return [w.lower() for w in words]


EXAMPLES = ("12→import os", "ΣAaΣ. a.Σb", "naïve cafe\u0301 ใส่ เช่น", "billing/webhooks.py")


@given(TEXTS)
@example(EXAMPLES[0])
@example(EXAMPLES[1])
@example(EXAMPLES[2])
@example(EXAMPLES[3])
def test_only_the_words_are_left(text):
    prepared = search_text([text])
    assert all(c == " " or c.isalnum() for c in prepared)
    assert _as_indexed(prepared.split()) == _as_indexed(words_of(text))


def test_parts_are_joined_and_long_text_cut():
    assert search_text(["Read", None, '{"file_path": "/a/b.py"}', "ok"]).split() == [
        "Read", "file", "path", "a", "b", "py", "ok"]  # fmt: skip
    long = "word " * LIMIT
    assert len(search_text([long])) == LIMIT
    assert search_text([]) == "" and search_text([None, None]) == " "


@pytest.fixture
def conn(pg_schemas):
    with psycopg.connect(pg_schemas(), autocommit=True) as conn:
        yield conn


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
@example(text=EXAMPLES[0])
@example(text=EXAMPLES[1])
@example(text=EXAMPLES[2])
@example(text=EXAMPLES[3])
def test_the_index_holds_what_a_query_looks_for(conn, text):
    """The tsvector of the prepared text is the tsvector of the query side's words, and each
    word, searched as `search` searches it, finds the text."""
    words = words_of(text)
    same, found = conn.execute(
        "SELECT to_tsvector('simple', %s) = to_tsvector('simple', %s),"
        " coalesce(bool_and(to_tsvector('simple', %s) @@ phraseto_tsquery('simple', w)), true)"
        " FROM unnest(%s::text[]) AS w",
        (search_text([text]), " ".join(words), search_text([text]), words),
    ).fetchone()
    assert same and found, (text, words)


def test_an_older_ledger_keeps_its_index_and_new_rows_get_theirs(pg_schemas):
    dsn = pg_schemas()
    steps = known_migrations()
    upgrade_at = next(m.version for m in steps if m.name == "writer_search_words")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f"CREATE TABLE {RECORD_TABLE} (version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for step in steps[: upgrade_at - 1]:
            conn.execute(step.sql.encode())
            conn.execute(f"INSERT INTO {RECORD_TABLE} VALUES (%s, %s)", (step.version, step.name))
        conn.execute(
            "INSERT INTO sessions (session_id, source_provider, source_session_id, title)"
            " VALUES ('old', 'codex', 'old', 'tidy the billing/webhooks.py handler')"
        )
        conn.execute(
            "INSERT INTO messages (message_id, session_id, role, message_type, content)"
            " VALUES ('old-m', 'old', 'user', 'text', 'rotate_key before noon')"
        )
        before = conn.execute("SELECT content_tsv::text FROM messages").fetchone()
    store = PostgresStore(dsn)
    assert store.import_batch(batch([item("new", 2, text="un café noir")])).ok
    generated = store.conn.execute(
        "SELECT count(*) FROM pg_attribute WHERE attgenerated <> ''"
        " AND attrelid IN ('messages'::regclass, 'tool_calls'::regclass, 'sessions'::regclass)"
    ).fetchone()
    assert generated == (0,)
    assert (
        store.conn.execute(
            "SELECT content_tsv::text FROM messages WHERE message_id = 'old-m'"
        ).fetchone()
        == before
    )
    (new,) = store.conn.execute(
        "SELECT session_id FROM sessions WHERE source_session_id = 'new'"
    ).fetchone()
    searches = ("webhooks", "rotate_key", "cafe", "session")
    assert {h.session_id for text in searches for h in store.search(text)} == {"old", new}
    store.close()
    with (
        psycopg.connect(dsn, autocommit=True) as conn,
        pytest.raises(psycopg.errors.NotNullViolation),
    ):
        # a writer of an earlier release, still running, names no search column
        conn.execute(
            "INSERT INTO messages (message_id, session_id, role, message_type, content)"
            " VALUES ('late', 'old', 'user', 'text', 'written by an old release')"
        )
