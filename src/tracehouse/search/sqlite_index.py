"""The SQLite full-text index: FTS5 external-content tables over the ledger, kept by the writer.

Three indexes, each over the rows of one table (`content=` that table, `content_rowid` its
rowid), so the text is stored once, in the ledger:

    messages_fts     messages.content (not of tool results: their call holds them), thinking
    tool_calls_fts   tool_calls.tool_name, params, result, error
    sessions_fts     sessions.title, task_description

The index is kept in the same transaction as the rows it indexes, by the writer and without
triggers (except a first load's two large indexes on a machine of many cores, built beside the
writer and adopted whole when its run finishes: `sqlite_builders`). A trigger on a table, even
one that never fires, makes SQLite keep a statement journal for every row written to it; with
the earlier insert/update/delete triggers, writing the rows cost twice what it costs bare, as
much again as the indexing itself. Instead:

- `search_marks` holds, per index, the highest rowid indexed. A new row always gets a rowid above
  every row in its table, so the rows inserted since the last `flush()` are those above the mark,
  and `flush()` indexes them in one statement at the end of the batch's transaction (indexing row
  by row inside the writer's per-item savepoints cost 2.5x the backfill: FTS5 writes its pending
  terms out as a new segment at every savepoint).
- A row that already is in the index and is about to be rewritten with other text (a re-imported
  session whose row's fingerprint changed) is taken out of it with its old text by
  `before_rewrite()`, and queued in `search_pending` for `flush()` to index again.
- Rows are deleted through `delete_rows()`, which takes them out of the index first and lowers the
  mark when the table's top rows went, so that their rowids, given out again, count as new.

An unchanged row is never rewritten by an import, so a no-change re-run never touches the index.
The ledger is written only through the import door; rows changed by hand are not re-indexed.
An index emptied ('delete-all') with its mark set to 0 is indexed again by the next sync's
`unindexed` catch-up; FTS5's 'rebuild' would index unspaced scripts unsplit.

Tokenizer: `unicode61 remove_diacritics 2`. It splits at every character that is not a letter
or a digit, so identifiers, file paths, snake_case and CLI flags become their words, and the query
side (`search/query.py`) turns a term with punctuation into the phrase of those words: `rotate_key`
finds `rotate_key` (and `webhooks` finds `billing/webhooks.py`). The trigram tokenizer would add
substring matches at about three times the index size and without meaningful BM25 ranks;
`porter` stemming would blur identifiers. Scripts written without spaces (Chinese, Japanese,
Thai, …) reach the tokenizer a character a word, through the `th_segmented` SQL function
(`search/scripts.py`), so a word inside a run of them is found as the phrase of its characters.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from tracehouse.model.tables import TABLES_BY_NAME
from tracehouse.search import scripts, sqlite_vectors

TOKENIZE = "unicode61 remove_diacritics 2"
# FTS5 writes its pending terms out as a segment every `hashsize` bytes (default 1 MiB) and
# merges a level's segments `automerge` at a time (default 4). A batch's terms in one segment
# and fewer, larger merges: a backfill's indexing costs 30% less (4.2-4.8 s instead of
# 6.1-7.2 s for 263 MB of text) at hashsize 16 MiB, automerge 8; automerge 16 took the index's
# share of a 960 MB backfill from 1.26x to 1.22x, with the same query latency (p95 27-29 ms).
# `crisismerge` (default 16) merges a level at once, in the statement that adds its sixteenth
# segment, before `automerge` 16 can merge it in steps: a backfill of the 951 MB corpus whose
# sixteenth flush came last spent 0.6-1.0 s alone in that merge after parsing had ended (4 runs
# of 9) and wrote 200 MB more. At 64 the merge goes in steps with the writes that follow (four
# interleaved runs each: median 10.8 s against 11.2 s).
TUNING = (("hashsize", 16 * 1024 * 1024), ("automerge", 16), ("crisismerge", 64))
FILL_STEP = 20_000  # rows indexed per statement when an existing ledger is indexed
SEGMENTED = scripts.SQL_FUNCTION
MARKS = "search_marks"
PENDING = "search_pending"
# Per connection (TEMP): the sessions the writer wrote rows of in this transaction, and whether
# any of those rows' indexed text holds an unspaced script (`note_sessions`). `flush` indexes
# the new rows of a session noted without one as they are, instead of through the SQL function:
# calling back into Python for every value was a third of the index's time (each text decoded
# into a Python string again), while the writer already holds the rows as Python strings, most
# of them ASCII, where the check is a flag. A row of a session not noted goes through the
# function, as before, so a writer that does not note (none today) stays correct.
NOTED = "temp.search_sessions"
# An index built beside the writer (`sqlite_builders`: a first load on a machine of many cores)
# keeps its state in TEMP tables of the writer's connection for the length of each import
# transaction (`open_built`): how far its builder has been handed rows, the rows to hand it
# again, and the 'delete' commands it is owed, each with the values the row was indexed with.
# A savepoint or transaction rolled back takes them back with the rows. The ledger's own index,
# mark and queue for it stay empty, so a run that dies leaves a ledger whose next flush indexes
# everything, as it would have without the builder.
BUILT = "temp.search_built"
BUILT_PENDING = "temp.search_built_pending"
BUILT_RETIRED = "temp.search_built_retired"


@dataclass(frozen=True)
class Index:
    name: str
    table: str
    key: str  # the table's primary key column
    columns: tuple[str, ...]
    # What is indexed for a column, if not the column itself ({r}: the row's alias)
    values: tuple[tuple[str, str], ...] = ()

    def value(self, column: str, row: str, *, segment: bool = True) -> str:
        found = dict(self.values).get(column, f"{{r}}.{column}").format(r=row)
        return f"{SEGMENTED}({found})" if segment else found

    def row_values(self, row: str, *, segment: bool = True) -> str:
        """What is indexed of the row `row`; `segment=False`: as schemas before 15 indexed it."""
        return ", ".join(self.value(c, row, segment=segment) for c in self.columns)

    @property
    def column_list(self) -> str:
        return ", ".join(self.columns)

    def insert_new(self) -> str:
        """`insert()` for the rows `t` above the mark, those of sessions noted free of unspaced
        scripts (`note_sessions`) indexed as they are."""
        if self.table not in NOTED_TABLES:
            return f"{self.insert()} FROM {self.table} t WHERE t.rowid > ?"
        values = ", ".join(
            f"CASE WHEN n.unspaced = 0 THEN {self.value(c, 't', segment=False)}"
            f" ELSE {self.value(c, 't')} END"
            for c in self.columns
        )
        return (
            f"INSERT INTO {self.name} (rowid, {self.column_list}) SELECT t.rowid, {values}"
            f" FROM {self.table} t LEFT JOIN {NOTED} n ON n.session_id = t.session_id"
            " WHERE t.rowid > ?"
        )

    def insert(self, *, segment: bool = True) -> str:
        """The start of a statement that indexes the rows `t` it selects FROM."""
        return (
            f"INSERT INTO {self.name} (rowid, {self.column_list})"
            f" SELECT t.rowid, {self.row_values('t', segment=segment)}"
        )


# A tool result message holds the output its tool call holds: indexed once, on the call, where
# a hit can name the tool.
_NOT_RESULTS = "CASE WHEN {r}.message_type = 'tool_result' THEN NULL ELSE {r}.content END"
INDEXES = (
    Index(
        "messages_fts",
        "messages",
        "message_id",
        ("content", "thinking"),
        (("content", _NOT_RESULTS),),
    ),
    Index(
        "tool_calls_fts", "tool_calls", "tool_call_id", ("tool_name", "params", "result", "error")
    ),
    Index("sessions_fts", "sessions", "session_id", ("title", "task_description")),
)
BY_TABLE = {index.table: index for index in INDEXES}
NOTED_TABLES = ("messages", "tool_calls")  # the bulk of the text; a session's own row is not
BY_NAME = {index.name: index for index in INDEXES}


def register(conn: sqlite3.Connection) -> None:
    """The SQL function every indexed value goes through (`search/scripts.py`): a connection
    that writes the ledger needs it, one that only reads does not."""
    conn.create_function(SEGMENTED, 1, scripts.sql_segmented, deterministic=True)


def _noted_table(conn: sqlite3.Connection) -> None:
    """`NOTED`, made in the transaction that uses it: changing `temp_store` (an import does)
    drops a connection's temporary tables."""
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {NOTED} (session_id TEXT PRIMARY KEY, unspaced INTEGER)"
    )


def unspaced_sessions(rows: Mapping[str, Iterable[tuple[Any, ...]]]) -> frozenset[str]:
    """The sessions with a row in `rows` (table → tuples in the table's column order) of a
    `NOTED_TABLES` table whose indexed text holds an unspaced script. The pipeline's parsers
    work it out for the batches they send (`ImportBatch.unspaced`), so the writer need not."""
    found: set[str] = set()
    for table in NOTED_TABLES:
        names = TABLES_BY_NAME[table].names
        session_at = names.index("session_id")
        text_at = [names.index(c) for c in BY_TABLE[table].columns]
        for row in rows.get(table, ()):
            if row[session_at] not in found and any(
                isinstance(row[i], str) and scripts.has_unspaced(row[i]) for i in text_at
            ):
                found.add(row[session_at])
    return frozenset(found)


def note_sessions(
    conn: sqlite3.Connection,
    rows: Mapping[str, Mapping[str, Sequence[tuple[Any, ...]]]],
    unspaced: frozenset[str] | None,
) -> None:
    """Before a batch's rows are upserted (table → session → tuples): note each session they
    belong to, and whether any of its rows holds an unspaced script in its indexed text
    (`unspaced`, where the batch says; else worked out here)."""
    sessions = {s for by_session in rows.values() for s in by_session}
    if unspaced is None:
        unspaced = unspaced_sessions(
            {t: [r for rs in rows.get(t, {}).values() for r in rs] for t in NOTED_TABLES}
        )
    _noted_table(conn)
    conn.executemany(
        f"INSERT INTO {NOTED} VALUES (?, ?) ON CONFLICT (session_id)"
        " DO UPDATE SET unspaced = max(unspaced, excluded.unspaced)",
        [(s, s in unspaced) for s in sessions],
    )


def open_built(conn: sqlite3.Connection, marks: Mapping[str, int]) -> None:
    """At the start of an import transaction: the indexes in `marks` (name → how far its
    builder was handed rows at the last commit) are built beside the writer in it."""
    slots = ", ".join(f"c{i}" for i in range(max(len(i.columns) for i in INDEXES)))
    for table, columns in (  # as MARKS, PENDING, and a 'delete' command each
        (BUILT, "name TEXT PRIMARY KEY, indexed_through INTEGER"),
        (BUILT_PENDING, "name TEXT, rid INTEGER, PRIMARY KEY (name, rid)"),
        (BUILT_RETIRED, f"seq INTEGER PRIMARY KEY, name TEXT, rid INTEGER, {slots}"),
    ):
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({columns})")
    conn.execute(f"DELETE FROM {BUILT}")
    conn.executemany(f"INSERT INTO {BUILT} VALUES (?, ?)", marks.items())


def built_names(conn: sqlite3.Connection) -> frozenset[str]:
    """The indexes built beside the writer in this transaction (none outside an import's)."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_temp_master WHERE name = ?", (BUILT.split(".")[1],)
    ).fetchone():
        return frozenset()
    return frozenset(name for (name,) in conn.execute(f"SELECT name FROM {BUILT}"))


def retired_columns(index: Index) -> str:
    """The columns of `BUILT_RETIRED` that hold the values of `index`'s columns."""
    return ", ".join(f"c{i}" for i in range(len(index.columns)))


def ddl(index: Index) -> list[str]:
    return [
        # content="table" double-quoted: how Datasette finds a table's index (schema 16)
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {index.name} USING fts5({index.column_list},"
        f" content=\"{index.table}\", content_rowid='rowid', tokenize='{TOKENIZE}')",
        *tuning(index),
        f"CREATE TABLE IF NOT EXISTS {MARKS} (name TEXT PRIMARY KEY, indexed_through INTEGER)",
        f"CREATE TABLE IF NOT EXISTS {PENDING} (name TEXT, rid INTEGER, PRIMARY KEY (name, rid))",
    ]


def tuning(index: Index) -> list[str]:
    """The statements that set an index's TUNING (kept in its `_config` table)."""
    return [
        f"INSERT INTO {index.name} ({index.name}, rank) VALUES ('{option}', {value})"
        for option, value in TUNING
    ]


def indexed_through(conn: sqlite3.Connection, index: Index) -> int | None:
    """The highest rowid in the ledger's own index, or None when this ledger keeps no such
    index."""
    row = conn.execute(
        f"SELECT indexed_through FROM {MARKS} WHERE name = ?", (index.name,)
    ).fetchone()
    return None if row is None else int(row[0])


@dataclass(frozen=True)
class _Place:
    """Where an index's state is kept in this transaction: its mark, the table that holds the
    mark and the queue of rows to index again; `built`, TEMP tables (`open_built`)."""

    mark: int
    marks: str
    pending: str
    built: bool


def _place(conn: sqlite3.Connection, index: Index) -> _Place | None:
    if index.name in built_names(conn):
        (mark,) = conn.execute(
            f"SELECT indexed_through FROM {BUILT} WHERE name = ?", (index.name,)
        ).fetchone()
        return _Place(int(mark), BUILT, BUILT_PENDING, built=True)
    mark = indexed_through(conn, index)
    return None if mark is None else _Place(mark, MARKS, PENDING, built=False)


def _unindex(
    conn: sqlite3.Connection, index: Index, source: str, where: str, params: Any, place: _Place
) -> None:
    """Take the rows `t` of `source … WHERE where` out of the index: those it holds, at or under
    the mark and not queued (a queued row left it when it was queued). A built index's builder
    is owed a 'delete' with the values it indexed, kept until `take_built`."""
    queued = f"t.rowid IN (SELECT rid FROM {place.pending} WHERE name = '{index.name}')"
    if place.built:
        into = f"{BUILT_RETIRED} (name, rid, {retired_columns(index)})"
        what = f"'{index.name}', t.rowid, {index.row_values('t', segment=False)}"
    else:
        into = f"{index.name} ({index.name}, rowid, {index.column_list})"
        what = f"'delete', t.rowid, {index.row_values('t')}"
    conn.execute(
        f"INSERT INTO {into} SELECT DISTINCT {what} FROM {source}"
        f" WHERE ({where}) AND t.rowid <= ? AND NOT {queued}",
        (*params, place.mark),
    )


def before_rewrite(
    conn: sqlite3.Connection, table: str, rows: Sequence[tuple[Any, ...]], names: Sequence[str]
) -> None:
    """Called before `rows` (tuples in `names` order) are upserted into `table`: the stored rows
    they will change (same id, other fingerprint) leave the index and wait for `flush()`."""
    index = BY_TABLE.get(table)
    if index is None or not rows:
        return
    key_at, fp_at = names.index(index.key), names.index("fingerprint")
    pairs = orjson.dumps([(row[key_at], row[fp_at]) for row in rows]).decode()
    source = f"json_each(?) AS j JOIN {table} AS t ON t.{index.key} = j.value ->> 0"
    _requeue(conn, index, source, "t.fingerprint IS NOT j.value ->> 1", (pairs,))


def before_replace(conn: sqlite3.Connection, table: str, key: str) -> None:
    """Called before the row `key` of `table` is rewritten whatever it holds (a session row)."""
    index = BY_TABLE.get(table)
    if index is not None:
        _requeue(conn, index, f"{table} AS t", f"t.{index.key} = ?", (key,))


def before_update(conn: sqlite3.Connection, table: str, where: str) -> None:
    """Called before an UPDATE of `table`'s rows that match `where` (a migration's, which no
    import fingerprints): they leave the index and wait for `flush()`."""
    index = BY_TABLE.get(table)
    if index is not None:
        _requeue(conn, index, f"{table} AS t", where, ())


def _requeue(
    conn: sqlite3.Connection, index: Index, source: str, where: str, params: tuple[Any, ...]
) -> None:
    sqlite_vectors.requeue(conn, index.table, source, where, params)
    place = _place(conn, index)
    if place is None:
        return
    _unindex(conn, index, source, where, params, place)
    conn.execute(
        f"INSERT OR IGNORE INTO {place.pending} (name, rid) SELECT ?, t.rowid FROM {source}"
        f" WHERE ({where}) AND t.rowid <= ?",
        (index.name, *params, place.mark),
    )


def delete_rows(conn: sqlite3.Connection, table: str, where: str, params: Iterable[Any]) -> int:
    """DELETE FROM table WHERE where, keeping its index true; returns the rows deleted."""
    params = tuple(params)
    sqlite_vectors.forget(conn, table, where, params)
    index = BY_TABLE.get(table)
    place = None if index is None else _place(conn, index)
    if index is None or place is None:
        deleted = conn.execute(f"DELETE FROM {table} WHERE {where}", params).rowcount
        sqlite_vectors.after_delete(conn, table)
        return int(deleted)
    aliased = f"t.rowid IN (SELECT rowid FROM {table} WHERE {where})"
    _unindex(conn, index, f"{table} AS t", aliased, params, place)
    conn.execute(
        f"DELETE FROM {place.pending} WHERE name = ? AND rid IN"
        f" (SELECT rowid FROM {table} WHERE {where})",
        (index.name, *params),
    )
    deleted = conn.execute(f"DELETE FROM {table} WHERE {where}", params).rowcount
    sqlite_vectors.after_delete(conn, table)
    # Rowids above the table's new top are given out again: they must count as new.
    conn.execute(
        f"UPDATE {place.marks} SET indexed_through = (SELECT coalesce(max(rowid), 0) FROM {table})"
        f" WHERE name = ? AND indexed_through > (SELECT coalesce(max(rowid), 0) FROM {table})",
        (index.name,),
    )
    return deleted


def unindexed(conn: sqlite3.Connection) -> int:
    """Rows the ledger's own index misses (above its marks, or queued to be indexed again):
    after builders were let go, or a run was killed while its indexes were built beside it.
    The next flush indexes them."""
    missed = conn.execute(f"SELECT count(*) FROM {PENDING}").fetchone()[0]
    for name, mark in conn.execute(f"SELECT name, indexed_through FROM {MARKS}").fetchall():
        if name in BY_NAME:
            table = BY_NAME[name].table
            sql = f"SELECT count(*) FROM {table} WHERE rowid > ?"
            missed += conn.execute(sql, (mark,)).fetchone()[0]
    return int(missed)


def flush(conn: sqlite3.Connection) -> None:
    """Index the rows written since the last flush; called in the batch's transaction. An index
    built beside the writer is left to `take_built`."""
    _noted_table(conn)
    built = built_names(conn)
    for name, mark in conn.execute(f"SELECT name, indexed_through FROM {MARKS}").fetchall():
        index = BY_NAME.get(name)
        if index is None or name in built:
            continue
        (top,) = conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {index.table}").fetchone()
        if top > mark:
            conn.execute(index.insert_new(), (mark,))
            conn.execute(f"UPDATE {MARKS} SET indexed_through = ? WHERE name = ?", (top, name))
        if conn.execute(f"SELECT 1 FROM {PENDING} WHERE name = ? LIMIT 1", (name,)).fetchone():
            conn.execute(
                f"{index.insert()} FROM {PENDING} p JOIN {index.table} t ON t.rowid = p.rid"
                " WHERE p.name = ?",
                (name,),
            )
            conn.execute(f"DELETE FROM {PENDING} WHERE name = ?", (name,))
    conn.execute(f"DELETE FROM {NOTED}")
