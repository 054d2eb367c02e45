"""PostgreSQL import_batch throughput against a bare binary COPY, measured in the same run.

    uv run python bench/postgres_bench.py [--messages 200000] [--per-session 100]
                                          [--dsn postgresql://postgres@127.0.0.1:5432/test]

Builds the same synthetic batches as `import_bench.py` (the parsers' in-process form), then,
each in a throwaway schema of the server at --dsn (default: TRACEHOUSE_PG_DSN or the local one):
  * floor: a bare binary COPY of the very same rows into empty tables with the same columns and
    primary keys (and the same full-text column on messages), one transaction per batch;
  * first import through `PostgresStore.import_batch` (rows/s and the ratio to the floor);
  * a no-change re-import (rows offered/s and the ratio to the first import).
Targets (issue #7): first import ≥ 50% of the floor; no-change re-import ≥ 3× the first import.
"""

from __future__ import annotations

import argparse
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import psycopg
from import_bench import build_batches, print_figures, time_imports

from tracehouse.model.columns import Kind, Table
from tracehouse.model.contract import ImportBatch
from tracehouse.model.tables import CONTENT_TABLES, SESSIONS
from tracehouse.store.postgres.store import PostgresStore

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
_TYPE = {Kind.TEXT: "text", Kind.INT: "int8", Kind.BOOL: "bool", Kind.JSON: "json"}
# json's binary wire form is its text, so JSON columns are sent with text's dumper.
_WIRE = {**_TYPE, Kind.JSON: "text"}


@contextmanager
def schema(dsn: str) -> Iterator[str]:
    """A fresh schema, and a DSN whose search_path is it; dropped afterwards."""
    name = f"th_bench_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    sep = "&" if "?" in dsn else "?"
    try:
        yield f"{dsn}{sep}options={quote(f'-csearch_path={name}')}"
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")


def create_floor_table(conn: psycopg.Connection, table: Table) -> None:
    columns = [f"{c.name} {_TYPE[c.kind]}" for c in table.columns]
    if table.name == "messages":
        columns.append(
            "content_tsv tsvector GENERATED ALWAYS AS"
            " (to_tsvector('simple', left(coalesce(content, ''), 200000))) STORED"
        )
    pk = ", ".join(table.primary_key)
    conn.execute(f"CREATE TABLE {table.name} ({', '.join(columns)}, PRIMARY KEY ({pk}))")
    if table.name == "messages":
        conn.execute("CREATE INDEX ON messages USING gin (content_tsv)")


def bare_floor(batches: list[ImportBatch], dsn: str) -> float:
    tables = [SESSIONS, *CONTENT_TABLES.values()]
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in tables:
            create_floor_table(conn, table)
        start = time.perf_counter()
        for batch in batches:
            with conn.transaction(), conn.cursor() as cur:
                for table in tables:
                    if table is SESSIONS:
                        rows = [[i.session.get(n) for n in SESSIONS.names] for i in batch.items]
                    else:
                        rows = batch.tuples(table.name)
                    if not rows:
                        continue
                    sql = f"COPY {table.name} FROM STDIN (FORMAT BINARY)"
                    with cur.copy(sql) as copy:
                        copy.set_types([_WIRE[c.kind] for c in table.columns])
                        for row in rows:
                            copy.write_row(row)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--per-session", type=int, default=100)
    parser.add_argument("--dsn", default=os.environ.get("TRACEHOUSE_PG_DSN") or DEFAULT_DSN)
    args = parser.parse_args()

    t0 = time.perf_counter()
    batches = build_batches(args.messages, args.per_session)
    # JSON columns go to the floor's COPY as text, as the store stages them
    batches = [ImportBatch(b.items, rows={n: b.tuples(n) for n in b.frames}) for b in batches]
    n_rows = sum(len(b.items) + sum(len(rows) for rows in b.rows.values()) for b in batches)
    print(f"built {len(batches)} batches, {n_rows:,} rows in {time.perf_counter() - t0:.1f}s")

    with schema(args.dsn) as floor_dsn:
        floor_s = bare_floor(batches, floor_dsn)
    with schema(args.dsn) as store_dsn:
        first_s, again_s, skipped = time_imports(PostgresStore(store_dsn), batches)

    print_figures("bare binary COPY", n_rows, floor_s, first_s, again_s, skipped)


if __name__ == "__main__":
    main()
