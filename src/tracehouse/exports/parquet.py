"""The ledger as Parquet: one file per table, typed by `model/tables.py`, for DuckDB, polars or
pandas. Written through Arrow in row groups as the rows stream from the store, so memory stays
flat whatever the ledger's size. JSON columns stay JSON text, as the ledger keeps them; the times
(`*_at`), ISO text in the ledger, are UTC timestamps, so a reader can compare and bucket them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from tracehouse.exports.selection import FILE_MODE, make_out, whole_file
from tracehouse.model.columns import Kind, Table
from tracehouse.model.tables import ALL_TABLES, SESSIONS
from tracehouse.redaction.rows import ExportTally, redact_chunk
from tracehouse.store.protocol import SessionStore
from tracehouse.timespec import parse_stored

if TYPE_CHECKING:
    import pyarrow as pa

    from tracehouse.redaction.redactor import Redactor

ROW_GROUP = 20_000  # rows held before they are written
# Rows read and turned into Arrow at a time: each column's conversion has a fixed cost per call
# (200 rows a chunk spent 0.2 s more on a 1 GB ledger), and a chunk of typical rows is a few MB.
CHUNK_ROWS = 500
BATCH_BYTES = 16 * 2**20  # or this much data, whichever comes first: tool outputs are large
# What a reader of an export can use: the ledger's own tables, not this machine's sync state
# (cursors name its inodes, and a parser's resume state is raw records half-read), nor the
# idempotency log, nor where its exports went, nor a gateway's tokens (their hashes and who
# holds them are no reader's business).
NOT_EXPORTED = ("watermarks", "import_requests", "export_marks", "api_tokens")
EXPORTED = tuple(t for t in ALL_TABLES if t.name not in NOT_EXPORTED)


@dataclass(frozen=True)
class Written:
    table: str
    path: Path
    rows: int


def schema(table: Table) -> pa.Schema:
    import pyarrow as pa

    types = {Kind.TEXT: pa.string(), Kind.INT: pa.int64(), Kind.BOOL: pa.bool_(),
             Kind.JSON: pa.string()}  # fmt: skip
    time = pa.timestamp("us", tz="UTC")
    return pa.schema(
        [pa.field(c.name, time if is_time(c) else types[c.kind],
                  nullable=c.name not in table.primary_key)
         for c in table.columns]
    )  # fmt: skip


def is_time(column: Any) -> bool:
    return bool(column.kind is Kind.TEXT and column.name.endswith("_at"))


def export_parquet(
    store: SessionStore,
    out: Path,
    *,
    session_ids: set[str] | None = None,
    redactor: Redactor | None = None,
    file_mode: int = FILE_MODE,
    tally: ExportTally | None = None,
) -> list[Written]:
    """Write `out/<table>.parquet` for every exported table (only `session_ids`' rows of the
    session tables when given; the run log whole), redacted of any secret the ledger still
    holds verbatim; `tally` counts the markers written and what the export replaced."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tally = ExportTally() if tally is None else tally
    make_out(out, file_mode)
    written = []
    # Arrow's default allocator keeps what one thread frees for the thread that allocated it:
    # groups built here and freed by the writer's thread would pile up (+90 MB on a 1 GB
    # ledger). The system allocator hands them back.
    memory = pa.system_memory_pool()
    # Arrow encodes and compresses a row group without the GIL, so one group is written on a
    # thread of its own while the next is read: at most two groups are ever held.
    with ThreadPoolExecutor(1, thread_name_prefix="parquet") as pool:
        for table in EXPORTED:
            path = out / f"{table.name}.parquet"
            count = 0
            with (
                whole_file(path, file_mode) as partial,
                pq.ParquetWriter(
                    partial, schema(table), compression="zstd", memory_pool=memory
                ) as writer,
            ):
                pending: Future[None] | None = None
                chunks = store.row_chunks(table.name, CHUNK_ROWS)
                if redactor is not None:
                    chunks = (redact_chunk(redactor, table, c, tally) for c in chunks)
                for group in _row_groups(table, chunks, session_ids, memory):
                    if pending is not None:
                        pending.result()
                    pending = pool.submit(writer.write_table, group, row_group_size=ROW_GROUP)
                    count += group.num_rows
                if pending is not None:
                    pending.result()
            written.append(Written(table.name, path, count))
    return written


def _row_groups(
    table: Table,
    chunks: Iterable[list[tuple[Any, ...]]],
    session_ids: set[str] | None,
    memory: pa.MemoryPool | None = None,
) -> Iterator[pa.Table]:
    """Row groups of at most ROW_GROUP rows or about BATCH_BYTES of Arrow data. Each chunk
    of rows becomes Arrow columns at once (no dict per row, no Python rows held), so a run of
    large tool outputs is written before it can grow."""
    import pyarrow as pa

    arrow = schema(table)
    owner = table.names.index("session_id") if "session_id" in table.names else None
    # text may come as str or as UTF-8 bytes
    kept: set[str | bytes] | None = None
    if session_ids is not None:
        kept = {*session_ids, *(s.encode() for s in session_ids)}
    held: list[pa.RecordBatch] = []
    rows = size = 0
    for chunk in chunks:
        if kept is not None and owner is not None:
            chunk = [row for row in chunk if row[owner] in kept]
        if not chunk:
            continue
        batch = _batch(table, chunk, arrow, memory)
        held.append(batch)
        rows, size = rows + batch.num_rows, size + batch.nbytes
        if rows >= ROW_GROUP or size >= BATCH_BYTES:
            yield pa.Table.from_batches(held, arrow)
            held, rows, size = [], 0, 0
    if held:
        yield pa.Table.from_batches(held, arrow)


def _batch(
    table: Table, rows: list[tuple[Any, ...]], arrow: pa.Schema, memory: pa.MemoryPool | None
) -> pa.RecordBatch:
    import pyarrow as pa

    arrays = []
    for column, values, field in zip(table.columns, zip(*rows, strict=True), arrow, strict=True):
        data: Sequence[Any] = values
        if is_time(column):
            arrays.append(_times(values, field.type, memory))
            continue
        if column.kind is Kind.BOOL:  # SQLite keeps 0 and 1, PostgreSQL booleans
            data = [None if v is None else bool(v) for v in values]
        elif column.kind is not Kind.INT and isinstance(
            next((v for v in values if v is not None), None), bytes
        ):
            # UTF-8 bytes from the store (a store gives a column in one form): copied as they
            # are, then checked to be UTF-8
            binary = pa.array(values, pa.binary(), memory_pool=memory)
            arrays.append(binary.cast(field.type, memory_pool=memory))
            continue
        elif column.kind is Kind.JSON:
            data = [_json_text(v) for v in values]
        arrays.append(pa.array(data, field.type, memory_pool=memory))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow)


def _times(values: Sequence[Any], kind: pa.DataType, memory: pa.MemoryPool | None) -> pa.Array:
    """Stored ISO times as timestamps: Arrow parses them at once; a batch holding one it cannot
    read (a time an agent wrote in another form) is parsed value by value, unreadable as null."""
    import pyarrow as pa

    texts = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in values]
    try:
        return pa.array(texts, pa.string(), memory_pool=memory).cast(kind, memory_pool=memory)
    except pa.ArrowInvalid:
        return pa.array([parse_stored(t, utc=True) for t in texts], kind, memory_pool=memory)


def _json_text(value: Any) -> str | bytes | None:
    """PostgreSQL may hand JSON back decoded; the export keeps JSON text, as the ledger does."""
    if value is None or isinstance(value, str | bytes):
        return value
    return orjson.dumps(value).decode()


def sessions_of(store: SessionStore, where: str, params: list[Any]) -> set[str]:
    """The ids of the sessions a filter keeps (`where` from `session_sql`)."""
    rows = store.query(f"SELECT s.session_id FROM {SESSIONS.name} s WHERE 1 = 1{where}", params)
    return {r["session_id"] for r in rows}
