"""The SQLite full-text index: FTS5 external-content tables over the ledger, kept by triggers.

Three indexes, each over the rows of one table (`content=` that table, `content_rowid` its
rowid), so the text is stored once, in the ledger:

    messages_fts     messages.content (not of tool results: their call holds them), thinking
    tool_calls_fts   tool_calls.tool_name, params, result, error
    sessions_fts     sessions.title, task_description

The index is kept in the same transaction as the rows it indexes, in two steps. Triggers note
each inserted or changed row in `<index>_pending`, and `flush()` indexes them all in one statement
at the end of the batch's transaction. Indexing row by row inside the writer's per-item
savepoints cost 2.5x the backfill: FTS5 writes its pending terms out as a new segment at every
savepoint, so each session became a tiny segment to merge. A deleted or changed row is taken out
of the index at once (its old text is only known then), unless it is still pending. The update
trigger fires only when an indexed column's value changes, so a store filling in a lineage link
does not re-index a tool call's output, and an unchanged row, never rewritten by an import, never
touches the index. (sqlite-utils' `enable_fts` triggers index row by row on every update, and
fill the index in one statement with no progress: hence these few lines of DDL.)

Tokenizer: `unicode61 remove_diacritics 2`. It splits at every character that is not a letter
or a digit, so identifiers, file paths, snake_case and CLI flags become their words, and the query
side (`search/query.py`) turns a term with punctuation into the phrase of those words: `rotate_key`
finds `rotate_key` (and `webhooks` finds `billing/webhooks.py`). The trigram tokenizer would add
substring matches at about three times the index size and without meaningful BM25 ranks;
`porter` stemming would blur identifiers.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass

TOKENIZE = "unicode61 remove_diacritics 2"
FILL_STEP = 20_000  # rows indexed per statement when an existing ledger is indexed


@dataclass(frozen=True)
class Index:
    name: str
    table: str
    columns: tuple[str, ...]
    # What is indexed for a column, if not the column itself ({r}: the row's alias)
    values: tuple[tuple[str, str], ...] = ()

    def value(self, column: str, row: str) -> str:
        found = dict(self.values).get(column, f"{{r}}.{column}")
        return found.format(r=row)

    def row_values(self, row: str) -> str:
        return ", ".join(self.value(c, row) for c in self.columns)


# A tool result message holds the output its tool call holds: indexed once, on the call, where
# a hit can name the tool.
_NOT_RESULTS = "CASE WHEN {r}.message_type = 'tool_result' THEN NULL ELSE {r}.content END"
INDEXES = (
    Index("messages_fts", "messages", ("content", "thinking"), (("content", _NOT_RESULTS),)),
    Index("tool_calls_fts", "tool_calls", ("tool_name", "params", "result", "error")),
    Index("sessions_fts", "sessions", ("title", "task_description")),
)


def ddl(index: Index) -> list[str]:
    cols = ", ".join(index.columns)
    old = index.row_values("old")
    changed = " OR ".join(
        f"{index.value(c, 'old')} IS NOT {index.value(c, 'new')}" for c in index.columns
    )
    name, table, pending = index.name, index.table, f"{index.name}_pending"
    indexed = f"NOT EXISTS (SELECT 1 FROM {pending} WHERE rid = old.rowid)"
    unindex = (
        f"INSERT INTO {name} ({name}, rowid, {cols}) SELECT 'delete', old.rowid, {old}"
        f" WHERE {indexed};"
    )
    return [
        f"CREATE VIRTUAL TABLE {name} USING fts5({cols}, content='{table}',"
        f" content_rowid='rowid', tokenize='{TOKENIZE}')",
        f"CREATE TABLE {pending} (rid INTEGER PRIMARY KEY)",
        f"CREATE TRIGGER {name}_ai AFTER INSERT ON {table} BEGIN"
        f" INSERT OR IGNORE INTO {pending} (rid) VALUES (new.rowid); END",
        f"CREATE TRIGGER {name}_ad AFTER DELETE ON {table} BEGIN {unindex}"
        f" DELETE FROM {pending} WHERE rid = old.rowid; END",
        f"CREATE TRIGGER {name}_au AFTER UPDATE OF {cols} ON {table} WHEN {changed} BEGIN"
        f" {unindex} INSERT OR IGNORE INTO {pending} (rid) VALUES (new.rowid); END",
    ]


def flush(conn: sqlite3.Connection) -> None:
    """Index the rows written since the last flush; called in the batch's transaction."""
    for index in INDEXES:
        pending = f"{index.name}_pending"
        if conn.execute(f"SELECT 1 FROM {pending} LIMIT 1").fetchone() is None:
            continue
        cols = ", ".join(index.columns)
        conn.execute(
            f"INSERT INTO {index.name} (rowid, {cols}) SELECT t.rowid, {index.row_values('t')}"
            f" FROM {pending} p JOIN {index.table} t ON t.rowid = p.rid"
        )
        conn.execute(f"DELETE FROM {pending}")


def create(conn: sqlite3.Connection, progress: Callable[[str], None] | None = None) -> None:
    """Create the indexes and fill them from the rows already in the ledger, in steps."""
    say = progress or _stderr
    for index in INDEXES:
        for sql in ddl(index):
            conn.execute(sql)
        last = conn.execute(f"SELECT max(rowid) FROM {index.table}").fetchone()[0] or 0
        if last > FILL_STEP:
            say(f"search index: indexing {index.table} ({last:,} rows)")
        cols = ", ".join(index.columns)
        for start in range(0, last + 1, FILL_STEP):
            conn.execute(
                f"INSERT INTO {index.name} (rowid, {cols}) SELECT t.rowid, {index.row_values('t')}"
                f" FROM {index.table} t WHERE t.rowid BETWEEN ? AND ?",
                (start, start + FILL_STEP - 1),
            )
            if last > FILL_STEP:
                done = min(start + FILL_STEP, last)
                say(f"search index: {index.table} {done:,} / {last:,}")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
