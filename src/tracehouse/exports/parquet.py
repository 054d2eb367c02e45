"""The ledger as Parquet: one file per table, typed by `model/tables.py`, for DuckDB, polars or
pandas. Written through Arrow in row groups as the rows stream from the store, so memory stays
flat whatever the ledger's size. JSON columns stay JSON text, as the ledger keeps them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from tracehouse.model.tables import ALL_TABLES, SESSIONS, Kind, Table
from tracehouse.sinks.protocol import SessionStore

if TYPE_CHECKING:
    import pyarrow as pa

ROW_GROUP = 20_000  # rows held before they are written: tool outputs make rows large
# What a reader of an export can use: the ledger's own tables, not its run log's internals
# nor where this machine's exports went.
EXPORTED = tuple(t for t in ALL_TABLES if t.name not in ("import_requests", "export_marks"))


@dataclass(frozen=True)
class Written:
    table: str
    path: Path
    rows: int


def schema(table: Table) -> pa.Schema:
    import pyarrow as pa

    types = {Kind.TEXT: pa.string(), Kind.INT: pa.int64(), Kind.BOOL: pa.bool_(),
             Kind.JSON: pa.string()}  # fmt: skip
    return pa.schema(
        [pa.field(c.name, types[c.kind], nullable=c.name not in table.primary_key)
         for c in table.columns]
    )  # fmt: skip


def export_parquet(
    store: SessionStore,
    out: Path,
    *,
    session_ids: set[str] | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> list[Written]:
    """Write `out/<table>.parquet` for every exported table (only `session_ids`' rows of the
    session tables when given; the run log whole)."""
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for table in EXPORTED:
        path = out / f"{table.name}.parquet"
        rows = store.rows(table.name)
        if session_ids is not None and "session_id" in table.names:
            rows = (r for r in rows if r["session_id"] in session_ids)
        count = 0
        partial = path.with_suffix(".parquet.partial")
        with pq.ParquetWriter(partial, schema(table), compression="zstd") as writer:
            for batch in _batches(table, rows):
                writer.write_batch(batch, row_group_size=ROW_GROUP)
                count += batch.num_rows
                if progress:
                    progress(table.name, count)
        partial.replace(path)  # a reader never sees half a file
        written.append(Written(table.name, path, count))
    return written


def _batches(table: Table, rows: Iterable[dict[str, Any]]) -> Iterator[pa.RecordBatch]:
    arrow = schema(table)
    convert = [(c.name, _converter(c.kind)) for c in table.columns]
    columns: list[list[Any]] = [[] for _ in convert]
    for row in rows:
        for values, (name, fix) in zip(columns, convert, strict=True):
            values.append(fix(row[name]))
        if len(columns[0]) >= ROW_GROUP:
            yield _batch(columns, arrow)
            columns = [[] for _ in convert]
    if columns[0]:
        yield _batch(columns, arrow)


def _batch(columns: list[list[Any]], arrow: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    arrays = [pa.array(values, field.type) for values, field in zip(columns, arrow, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=arrow)


def _converter(kind: Kind) -> Callable[[Any], Any]:
    if kind is Kind.BOOL:
        return lambda v: None if v is None else bool(v)  # SQLite keeps 0 and 1
    if kind is Kind.JSON:  # PostgreSQL hands JSON back decoded
        return lambda v: v if v is None or isinstance(v, str) else orjson.dumps(v).decode()
    return lambda v: v


def sessions_of(store: SessionStore, where: str, params: list[Any]) -> set[str]:
    """The ids of the sessions a filter keeps (`where` from `session_sql`)."""
    rows = store.query(f"SELECT s.session_id FROM {SESSIONS.name} s WHERE 1 = 1{where}", params)
    return {r["session_id"] for r in rows}
