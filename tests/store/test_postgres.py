"""What only the PostgreSQL store has: its SQL schema, its merge, its locks and its DSNs.

The import contract itself runs against PostgreSQL through `make_store` (test_import_contract.py).
"""

from __future__ import annotations

import copy
import multiprocessing

import psycopg
import pytest

from tests.pg import with_schema
from tests.store.factory import CONTENT, WHEN, batch, item, snapshot
from tracehouse.errors import StoreError
from tracehouse.model.columns import Kind
from tracehouse.model.tables import ALL_TABLES
from tracehouse.search.postgres_words import VECTORS
from tracehouse.store import open_store
from tracehouse.store.location import masked
from tracehouse.store.postgres.connect import scrub
from tracehouse.store.postgres.store import PostgresStore
from tracehouse.store.postgres.tx import placeholders
from tracehouse.store.protocol import RunTotals

PG_TYPE = {Kind.TEXT: "text", Kind.INT: "bigint", Kind.BOOL: "boolean", Kind.JSON: "json"}


@pytest.fixture
def dsn(pg_schemas):
    return pg_schemas()


def test_the_sql_schema_matches_the_table_declarations(dsn):
    store = PostgresStore(dsn)
    for table in ALL_TABLES:
        rows = store.conn.execute(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = %s"
            " ORDER BY ordinal_position",
            (table.name,),
        ).fetchall()
        expected = [
            (c.name, PG_TYPE[c.kind], "NO" if c.required or c.name in table.primary_key else "YES")
            for c in table.columns
        ]
        vectors = [v.column for v in VECTORS.get(table.name, ())]
        assert [r for r in rows if r[0] not in vectors] == expected, table.name
        # the full-text columns the writer fills, which a row may not lack
        assert sorted(r for r in rows if r[0] in vectors) == [
            (v, "tsvector", "NO") for v in sorted(vectors)
        ]
    store.close()


def test_unchanged_rows_are_not_rewritten(dsn):
    store = PostgresStore(dsn)
    store.import_batch(batch([item("a", 6)]))
    store.conn.execute("CREATE TABLE writes (tbl text, id text)")
    store.conn.execute(
        "CREATE FUNCTION note_write() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN INSERT INTO writes VALUES (TG_TABLE_NAME, TG_OP); RETURN NEW; END $$"
    )
    for table in ("messages", "turns", "tool_calls", "message_sources"):
        store.conn.execute(
            f"CREATE TRIGGER w_{table} AFTER UPDATE ON {table}"
            " FOR EACH ROW EXECUTE FUNCTION note_write()"
        )
    changed = item("a", 7)
    changed["messages"][0]["content"] = "edited"
    store.import_batch(batch([changed]))
    assert store.conn.execute("SELECT tbl FROM writes").fetchall() == [("messages",)]
    assert store.info().row_counts["messages"] == 7
    store.close()


def test_message_content_is_searchable(dsn):
    store = PostgresStore(dsn)
    store.import_batch(batch([item("a", 4, text="refactor the tokenizer")]))
    found = store.query(
        "SELECT seq FROM messages WHERE content_tsv @@ plainto_tsquery('simple', ?) ORDER BY seq",
        ["tokenizer"],
    )
    assert [r["seq"] for r in found] == [0, 1, 2, 3]
    store.close()


def test_a_run_that_grew_the_ledger_refreshes_its_statistics(dsn):
    """The test server runs without autovacuum: only the store's own ANALYZE can set these."""
    store = PostgresStore(dsn)

    def analyzed() -> set[str]:
        rows = store.conn.execute(
            "SELECT relname FROM pg_stat_user_tables"
            " WHERE schemaname = current_schema() AND last_analyze IS NOT NULL"
        ).fetchall()
        return {name for (name,) in rows}

    store.start_run("small", "backfill")
    store.import_batch(batch([item("a", 3)], runId="small"))
    store.finish_run("small", RunTotals())
    assert analyzed() == set()
    store.start_run("big", "backfill")
    store.import_batch(batch([item(f"s{n}", 40) for n in range(30)], runId="big"))
    store.finish_run("big", RunTotals())
    assert {"messages", "sessions"} <= analyzed()
    store.close()


def test_a_nul_in_text_is_kept_as_a_replacement_character(dsn):
    store = PostgresStore(dsn)
    raw = item("a", 2)
    raw["messages"][1]["content"] = "binary\x00output"
    response = store.import_batch(batch([raw, item("b")]))
    assert [r.status for r in response.results] == ["imported", "imported"]
    contents = {r["content"] for r in store.rows("messages")}
    assert "binary\ufffdoutput" in contents
    store.close()


def test_a_newer_schema_is_refused(dsn):
    PostgresStore(dsn).close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO tracehouse_migrations (version, name) VALUES (99, 'future')")
    with pytest.raises(StoreError, match="newer tracehouse"):
        PostgresStore(dsn)


def test_the_password_never_shows(pg_server):
    secret = "hunter2-Secret"
    dsn = pg_server.dsn.replace("postgres@", f"postgres:{secret}@", 1)
    store = open_store(with_schema(dsn, "public"))
    assert secret not in store.location
    assert secret not in str(store.info())
    store.close()
    wrong_db = dsn.rsplit("/", 1)[0] + "/no_such_database_here"
    with pytest.raises(StoreError) as caught:
        open_store(wrong_db)
    assert secret not in str(caught.value)
    assert "no_such_database_here" in str(caught.value)


def test_masking_and_scrubbing():
    assert masked("postgresql://bob:pw@db:5432/x?sslmode=require") == (
        "postgresql://bob:***@db:5432/x?sslmode=require"
    )
    assert masked("postgresql://bob@db/x") == "postgresql://bob@db/x"
    assert masked("postgresql://db/x") == "postgresql://db/x"
    assert scrub('failed: "postgresql://u:p%40ss@h/x"', "postgresql://u:p%40ss@h/x") == (
        'failed: "postgresql://u:***@h/x"'
    )


def test_placeholders_follow_psycopg():
    assert placeholders("SELECT * FROM t WHERE a = ? AND b LIKE ?") == (
        "SELECT * FROM t WHERE a = %s AND b LIKE %s"
    )
    assert placeholders("SELECT '?', 5 % 2 WHERE x = ?") == "SELECT '?', 5 %% 2 WHERE x = %s"


# -- several machines at once ---------------------------------------------------------------

POOL = [item(f"c{i}", 2 + i % 5) for i in range(24)]


def plan(worker: int) -> list[list[int]]:
    """Overlapping batches: each worker imports most of the pool, in its own order and cuts."""
    order = list(range(len(POOL)))
    order = order[worker * 5 :] + order[: worker * 5]
    if worker % 2:
        order.reverse()
    size = 3 + worker
    return [order[i : i + size] for i in range(0, len(order), size)]


def import_plan(dsn: str, worker: int, start: object, results: multiprocessing.Queue) -> None:
    store = open_store(dsn)
    batches = [batch([copy.deepcopy(POOL[i]) for i in chunk]) for chunk in plan(worker)]
    start.wait()  # type: ignore[attr-defined]  # all four push at the same moment
    statuses = []
    for prepared in batches:
        response = store.import_batch(prepared)
        statuses.extend(r.status for r in response.results)
    store.close()
    results.put(statuses)


@pytest.mark.slow
def test_four_processes_importing_overlapping_batches_equal_one_import(pg_schemas):
    shared, reference = pg_schemas(), pg_schemas()
    open_store(shared).close()  # schema in place: the workers race on rows, not on DDL
    context = multiprocessing.get_context("spawn")
    results, start = context.Queue(), context.Barrier(4)
    workers = [
        context.Process(target=import_plan, args=(shared, w, start, results)) for w in range(4)
    ]
    for process in workers:
        process.start()
    statuses = [results.get(timeout=120) for _ in workers]
    for process in workers:
        process.join(timeout=60)
        assert process.exitcode == 0

    sequential = open_store(reference)
    sequential.import_batch(batch([copy.deepcopy(i) for i in POOL]))
    together = open_store(shared)
    assert snapshot(together, (*CONTENT,), drop=WHEN) == snapshot(sequential, drop=WHEN)
    # every session was imported exactly once; every other offer of it was a skip
    flat = [s for worker in statuses for s in worker]
    assert flat.count("imported") == len(POOL)
    assert set(flat) == {"imported", "skipped"}
    runs = together.query("SELECT sum(imported) AS n, sum(failed) AS f FROM import_runs")
    assert runs[0]["n"] == len(POOL)
    assert runs[0]["f"] == 0
    together.close()
    sequential.close()


def test_a_deadlock_or_serialization_failure_reruns_the_whole_transaction(dsn):
    store = PostgresStore(dsn)
    attempts = []

    def work(conn):
        conn.execute(
            "INSERT INTO rejects (reject_id, reason) VALUES (%s, 'try')", (f"r{len(attempts)}",)
        )
        attempts.append(1)
        if len(attempts) == 1:
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        if len(attempts) == 2:
            raise psycopg.errors.SerializationFailure("could not serialize access")
        return "done"

    assert store._in_transaction(work) == "done"
    # the two failed attempts rolled back whole: only the third one's row is there
    assert [r["reject_id"] for r in store.rows("rejects")] == ["r2"]
    store.close()
