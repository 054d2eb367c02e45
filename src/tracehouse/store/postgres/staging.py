"""Staging a batch's rows on PostgreSQL: a binary COPY into temporary tables, then one merge
statement per table that writes only the rows whose fingerprint changed (DESIGN §8).

A table with full-text columns is staged with one more text column per tsvector, its words
prepared here (`search/postgres_words.py`); the merge turns them into the tsvector."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from tracehouse.model.columns import Kind, Table
from tracehouse.model.contract import ImportBatch
from tracehouse.model.tables import CONTENT_TABLES
from tracehouse.search.postgres_words import VECTORS
from tracehouse.store.postgres.tx import Conn

TABLES = tuple(CONTENT_TABLES.values())
_STAGE_TYPE = {Kind.TEXT: "text", Kind.INT: "int8", Kind.BOOL: "bool", Kind.JSON: "text"}


def stage_name(table: Table) -> str:
    return f"stage_{table.name}"


def create_staging(conn: Conn) -> None:
    """Per-connection staging tables; `ON COMMIT DELETE ROWS` empties them after each batch.

    Their long values are compressed with lz4 where the server has it: pglz compressing the
    staged text was a tenth of the server's CPU in a backfill, and a value compressed here is
    copied as it is into a ledger column that also uses lz4 (migration 0012)."""
    row = conn.execute(
        "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
    ).fetchone()
    text = "text COMPRESSION lz4" if row and row[0] else "text"
    kinds = {**_STAGE_TYPE, Kind.TEXT: text, Kind.JSON: text}
    for table in TABLES:
        columns = ", ".join(
            [f"{c.name} {kinds[c.kind]}" for c in table.columns]
            + [f"{v.staged} {text}" for v in VECTORS.get(table.name, ())]
        )
        conn.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {stage_name(table)}"
            f" ({columns}, _ord bigserial) ON COMMIT DELETE ROWS"
        )


def _merge_sql(table: Table, where: str) -> str:
    vectors = VECTORS.get(table.name, ())
    names = (*table.names, *(v.column for v in vectors))
    pk = ", ".join(table.primary_key)
    select = ", ".join(
        [f"{c.name}::json" if c.kind is Kind.JSON else c.name for c in table.columns]
        + [f"to_tsvector('simple', {v.staged})" for v in vectors]
    )
    updates = ", ".join(f"{n} = excluded.{n}" for n in names if n not in table.primary_key)
    # DISTINCT ON: a row offered twice in one batch is written once, the later copy winning,
    # as sequential inserts would leave it.
    return (
        f"INSERT INTO {table.name} AS t ({', '.join(names)}) SELECT {select} FROM"
        f" (SELECT DISTINCT ON ({pk}) * FROM {stage_name(table)} {where}"
        f" ORDER BY {pk}, _ord DESC) AS s"
        f" ON CONFLICT ({pk}) DO UPDATE SET {updates}"
        " WHERE t.fingerprint IS DISTINCT FROM excluded.fingerprint RETURNING t.session_id"
    )


MERGE_ALL = {t.name: _merge_sql(t, "") for t in TABLES}
MERGE_ONE = {t.name: _merge_sql(t, "WHERE session_id = %s") for t in TABLES}


def stage(conn: Conn, batch: ImportBatch, sessions: set[str]) -> None:
    """Binary COPY of the rows of the sessions to write. PostgreSQL text cannot hold NUL, so a
    batch that has one is staged again with NUL as U+FFFD (the fingerprint keeps the source's)."""
    tables = [(t, _rows_of(batch, t, sessions)) for t in TABLES]
    try:
        with conn.transaction():
            _copy(conn, tables)
    except psycopg.DataError:
        _copy(conn, [(t, [without_nul(row) for row in rows]) for t, rows in tables])


def _rows_of(batch: ImportBatch, table: Table, sessions: set[str]) -> list[tuple[Any, ...]]:
    at = table.names.index("session_id")
    rows = [row for row in batch.tuples(table.name) if row[at] in sessions]
    preparers = [v.preparer(table.names) for v in VECTORS.get(table.name, ())]
    if not preparers:
        return rows
    return [(*row, *(prepare(row) for prepare in preparers)) for row in rows]


def _copy(conn: Conn, tables: Sequence[tuple[Table, list[tuple[Any, ...]]]]) -> None:
    with conn.cursor() as cur:
        for table, rows in tables:
            if not rows:
                continue
            vectors = VECTORS.get(table.name, ())
            names = ", ".join([*table.names, *(v.staged for v in vectors)])
            sql = f"COPY {stage_name(table)} ({names}) FROM STDIN (FORMAT BINARY)"
            with cur.copy(sql) as copy:
                copy.set_types(
                    [_STAGE_TYPE[c.kind] for c in table.columns] + ["text"] * len(vectors)
                )
                for row in rows:
                    copy.write_row(row)


def without_nul(row: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(v.replace("\x00", "\ufffd") if isinstance(v, str) else v for v in row)
