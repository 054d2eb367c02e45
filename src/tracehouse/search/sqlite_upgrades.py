"""How the search indexes came to be in a ledger made before they were kept as they are now:
filled from the rows already there (schema 3), made writer-kept instead of trigger-kept (schema
6), and indexed again with unspaced scripts split into characters (schema 15). Only the
migrations call these; the writer keeps the indexes through `search/sqlite_index.py`."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable

from tracehouse.search import scripts
from tracehouse.search.sqlite_index import (
    FILL_STEP,
    INDEXES,
    MARKS,
    PENDING,
    ddl,
    indexed_through,
)


def create(conn: sqlite3.Connection, progress: Callable[[str], None] | None = None) -> None:
    """Schema 3: create the indexes and fill them from the rows already in the ledger, in
    steps, as schema 3 did (`segment_scripts` brings them to schema 15)."""
    say = progress or _stderr
    for index in INDEXES:
        for sql in ddl(index):
            conn.execute(sql)
        if indexed_through(conn, index) is not None:
            continue
        last = conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {index.table}").fetchone()[0]
        if last > FILL_STEP:
            say(f"search index: indexing {index.table} ({last:,} rows)")
        for start in range(0, last + 1, FILL_STEP):
            conn.execute(
                f"{index.insert(segment=False)} FROM {index.table} t WHERE t.rowid BETWEEN ? AND ?",
                (start, start + FILL_STEP - 1),
            )
            if last > FILL_STEP:
                done = min(start + FILL_STEP, last)
                say(f"search index: {index.table} {done:,} / {last:,}")
        conn.execute(f"INSERT INTO {MARKS} VALUES (?, ?)", (index.name, last))


def drop_triggers(conn: sqlite3.Connection) -> None:
    """Schema 6: the trigger-kept index of schema 3 becomes writer-kept. Whatever the triggers
    queued is indexed first, then the triggers and their queues go and the marks start at the
    tables' tops (everything under them is in the index: the queues were emptied in the same
    transaction as every write)."""
    for index in INDEXES:
        queue = f"{index.name}_pending"
        if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (queue,)
        ).fetchone():
            conn.execute(
                f"{index.insert(segment=False)} FROM {queue} p JOIN {index.table} t"
                " ON t.rowid = p.rid"
            )
            conn.execute(f"DROP TABLE {queue}")
        for suffix in ("ai", "ad", "au"):
            conn.execute(f"DROP TRIGGER IF EXISTS {index.name}_{suffix}")
        for sql in ddl(index):
            conn.execute(sql)
        conn.execute(
            f"INSERT OR IGNORE INTO {MARKS} SELECT ?, coalesce(max(rowid), 0) FROM {index.table}",
            (index.name,),
        )


def segment_scripts(conn: sqlite3.Connection) -> int:
    """Schema 15: rows indexed before scripts without spaces were split into characters are
    indexed again, split. Only rows holding such text change; returns how many there were."""
    conn.create_function("th_has_unspaced", 1, scripts.has_unspaced, deterministic=True)
    changed = 0
    for index in INDEXES:
        mark = indexed_through(conn, index)
        if mark is None:
            continue
        pending = f"SELECT rid FROM {PENDING} WHERE name = '{index.name}'"
        unspaced = " OR ".join(f"th_has_unspaced(t.{c})" for c in index.columns)
        where = f"t.rowid <= {mark} AND t.rowid NOT IN ({pending}) AND ({unspaced})"
        rows = f"(SELECT t.rowid AS rid FROM {index.table} t WHERE {where})"
        conn.execute(f"CREATE TEMP TABLE th_segment AS {rows[1:-1]}")
        conn.execute(
            f"INSERT INTO {index.name} ({index.name}, rowid, {index.column_list})"
            f" SELECT 'delete', t.rowid, {index.row_values('t', segment=False)}"
            f" FROM th_segment s JOIN {index.table} t ON t.rowid = s.rid"
        )
        conn.execute(f"{index.insert()} FROM th_segment s JOIN {index.table} t ON t.rowid = s.rid")
        changed += conn.execute("SELECT count(*) FROM th_segment").fetchone()[0]
        conn.execute("DROP TABLE th_segment")
    return changed


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
