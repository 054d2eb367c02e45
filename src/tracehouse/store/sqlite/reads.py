"""What the SQLite store reads straight off a connection: cursors, row chunks for exports, and
the read-only connections search ranks on."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from tracehouse.model.columns import Kind
from tracehouse.model.tables import TABLES_BY_NAME
from tracehouse.store.sqlite.connection import BUSY_TIMEOUT_MS

SEARCH_MMAP_BYTES = 1 << 30
SEARCH_THREADS = 3


def watermarks(
    conn: sqlite3.Connection, provider: str, unit_keys: Iterable[str] | None = None
) -> dict[str, dict[str, Any]]:
    if unit_keys is None:
        rows = conn.execute(
            "SELECT unit_key, cursor FROM watermarks WHERE source_provider = ?", (provider,)
        ).fetchall()
    else:
        keys, rows = list(unit_keys), []
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            rows += conn.execute(
                "SELECT unit_key, cursor FROM watermarks WHERE source_provider = ?"
                f" AND unit_key IN ({', '.join('?' * len(chunk))})",
                (provider, *chunk),
            ).fetchall()
    return {key: orjson.loads(cursor) if cursor else {} for key, cursor in rows}


def watermark_states(
    conn: sqlite3.Connection, provider: str, unit_keys: Iterable[str]
) -> dict[str, Any]:
    keys = list(unit_keys)
    out: dict[str, Any] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        rows = conn.execute(
            "SELECT unit_key, state FROM watermarks WHERE source_provider = ? AND state IS NOT"
            f" NULL AND unit_key IN ({', '.join('?' * len(chunk))})",
            (provider, *chunk),
        )
        out.update((key, orjson.loads(state)) for key, state in rows)
    return out


def row_chunks(
    conn: sqlite3.Connection, table: str, size: int = 1000
) -> Iterator[list[tuple[Any, ...]]]:
    spec = TABLES_BY_NAME[table]
    # Text as its UTF-8 bytes: an export hands it on to Arrow, and decoding it into Python
    # strings only to encode it again is a third of the cost. Storage order: ordering by a
    # text key would visit the table in random order.
    columns = ", ".join(
        f"CAST({c.name} AS BLOB)" if c.kind in (Kind.TEXT, Kind.JSON) else c.name
        for c in spec.columns
    )
    cursor = conn.execute(f"SELECT {columns} FROM {table}")
    while chunk := cursor.fetchmany(size):
        yield chunk


def search_readers(path: Path) -> list[sqlite3.Connection]:
    """Read-only connections that search ranks its sources on, one per thread. A search reads
    rows scattered over the whole file: through a memory map each is a page fault at most, not a
    read() call, which halves the cost of joining the hits. Only searching maps the file, so a
    backfill's memory is not charged with its pages."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    readers = []
    for _ in range(min(SEARCH_THREADS, os.cpu_count() or 1)):
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute(f"PRAGMA mmap_size = {SEARCH_MMAP_BYTES}")
        readers.append(conn)
    return readers
