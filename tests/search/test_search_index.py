"""The SQLite writer keeps its FTS5 indexes true without triggers: rows re-imported with other
text, deleted rows, rowids given out again and ledgers of the trigger-kept schema.

After every step, FTS5's own integrity check (rank 1: against the content tables) must pass and
a search must find exactly what the rows hold."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

from tests.store.factory import batch, item
from tracehouse.search import sqlite_index
from tracehouse.search.hits import SearchFilters
from tracehouse.store.sqlite.store import SqliteStore

WORDS = ("alpha", "bravo", "charlie", "delta")


def check(store: SqliteStore) -> None:
    for index in sqlite_index.INDEXES:
        store.conn.execute(
            f"INSERT INTO {index.name} ({index.name}, rank) VALUES ('integrity-check', 1)"
        )
    for word in WORDS:
        expected = {
            row[0]
            for row in store.conn.execute(
                "SELECT message_id FROM messages WHERE content LIKE ?", (f"{word} %",)
            )
        }
        found = {
            hit.id for hit in store.search(word, SearchFilters(limit=1000)) if hit.kind != "title"
        }
        assert found == expected, word


def labels(store: SqliteStore, word: str) -> set[str]:
    return {hit.label for hit in store.search(word, SearchFilters(limit=1000))}


def test_a_row_imported_again_with_other_text_is_found_by_its_new_text(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "l.db")
    store.import_batch(batch([item("s1", text="alpha")]))
    store.import_batch(batch([item("s1", text="bravo", title="quokka notes")]))
    assert labels(store, "alpha") == set()
    assert labels(store, "bravo") and labels(store, "quokka")
    assert store.search("session", SearchFilters()) == []  # the old title left the index
    check(store)


def test_rowids_given_out_again_after_a_delete_count_as_new(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "l.db")
    store.import_batch(batch([item("s1", text="alpha"), item("s2", text="bravo")]))
    with store.transaction() as conn:  # s2's rows are the tables' top rows
        for table in ("messages", "tool_calls", "sessions"):
            sqlite_index.delete_rows(conn, table, "session_id LIKE ?", ("%",))
    store.import_batch(batch([item("s3", text="charlie")]))
    assert labels(store, "charlie") and not labels(store, "bravo")
    check(store)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["import", "delete"]),
            st.lists(
                st.tuples(st.sampled_from(["s1", "s2", "s3"]), st.sampled_from(WORDS)),
                min_size=1,
                max_size=3,
            ),
            st.integers(1, 4),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_any_sequence_of_imports_and_deletes_keeps_the_index_true(tmp_path: Path, steps) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / f"l{id(steps)}.db"
    store = SqliteStore(path)
    try:
        for action, sessions, n in steps:
            if action == "import":  # one batch, a session possibly twice (chunks of one file)
                store.import_batch(batch([item(s, n, text=w) for s, w in sessions]))
            else:
                with store.transaction() as conn:
                    for s, _ in sessions:
                        sqlite_index.delete_rows(
                            conn,
                            "messages",
                            "source_message_id = ? AND session_id LIKE ?",
                            (f"m{n - 1}", f"%{s[-1]}%"),
                        )
            check(store)
    finally:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


# The index as schema 3 to 5 kept it: triggers queuing rowids, emptied by the writer.
OLD_TRIGGERS = """
CREATE TABLE {name}_pending (rid INTEGER PRIMARY KEY);
CREATE TRIGGER {name}_ai AFTER INSERT ON {table} BEGIN
  INSERT OR IGNORE INTO {name}_pending (rid) VALUES (new.rowid); END;
"""


def test_a_ledger_of_the_trigger_kept_schema_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    SqliteStore(path).import_batch(batch([item("s1", text="alpha")]))
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm006_search_index_without_triggers'")
    conn.execute("DROP TABLE search_marks")
    conn.execute("DROP TABLE search_pending")
    for index in sqlite_index.INDEXES:
        conn.executescript(OLD_TRIGGERS.format(name=index.name, table=index.table))
    # A row its trigger queued and no writer indexed yet.
    conn.execute(
        "INSERT INTO messages (message_id, session_id, role, message_type, content)"
        " SELECT 'msg_new', session_id, 'user', 'user', 'delta 9' FROM sessions"
    )
    conn.close()

    store = SqliteStore(path)
    triggers = store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
    assert triggers.fetchall() == []
    assert labels(store, "delta") == {"cc-s1"}
    store.import_batch(batch([item("s2", text="bravo")]))
    assert labels(store, "bravo") and labels(store, "alpha")
    check(store)
