"""Search by meaning on SQLite: the vectors of the ledger's passages, kept beside its rows.

    embedding_state    the model whose vectors the ledger holds, and their length
    embedding_marks    per table (messages, tool_calls, sessions), the highest rowid embedded
    embedding_pending  rows at or under a mark rewritten since (queued by `requeue`)
    embedded           each passage: its source, row, part and text key
    embedding_keys     each text key embedded, and the block its vector is in
    embedding_blocks   the vectors, BLOCK at a time (`search/vectors.py`)

Vectors are made after a sync's rows are committed, in short transactions of their own
(`embed_step`), so an import never waits for a model and a run killed while embedding resumes
where it stopped: new rows are those above the marks, as for the full-text index
(`sqlite_index`), and a row rewritten with other text is queued when it is rewritten. A text
embedded before is not embedded again. A deleted row's passages go with it; its vector stays
in its block, unreachable, until `prune` (the store's `compact`, which `secrets redact`
runs) rewrites the blocks without it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

import orjson

from tracehouse.search import passages
from tracehouse.search.passages import Passage
from tracehouse.search.semantic import Status

if TYPE_CHECKING:
    import numpy as np

    from tracehouse.search.embedders import Embedder
    from tracehouse.search.vectors import Block

STATE = "embedding_state"
MARKS = "embedding_marks"
PENDING = "embedding_pending"
TABLES = ("messages", "tool_calls", "sessions")
SOURCES_OF = {"messages": ("content", "thinking"), "tool_calls": ("tool",), "sessions": ("title",)}
# Rows read per step: one step's passages are embedded and written in one short transaction
# (a tenth of a second of the write lock on WordLlama). 5,000 against 2,000: 2.25 s against
# 2.5 s for the bench corpus's 246,000 rows.
STEP_ROWS = 5000

DDL = (
    f"CREATE TABLE IF NOT EXISTS {STATE} (id INTEGER PRIMARY KEY CHECK (id = 1),"
    " model TEXT NOT NULL, dims INTEGER NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {MARKS} (name TEXT PRIMARY KEY,"
    " embedded_through INTEGER NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {PENDING} (name TEXT NOT NULL, rid INTEGER NOT NULL,"
    " PRIMARY KEY (name, rid)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS embedded (source TEXT NOT NULL, rid INTEGER NOT NULL,"
    " part INTEGER NOT NULL, text_key INTEGER NOT NULL, PRIMARY KEY (source, rid, part))"
    " WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS idx_embedded_key ON embedded (text_key)",
    "CREATE TABLE IF NOT EXISTS embedding_keys (text_key INTEGER PRIMARY KEY,"
    " block INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS embedding_blocks (block INTEGER PRIMARY KEY,"
    " keys BLOB NOT NULL, vectors BLOB NOT NULL)",
)
# What a step reads of each table's rows to make their passages.
_READ = passages.READ_CHARS
_ROWS = {
    # a tool result's text is its call's: not read at all
    "messages": f"SELECT rowid, message_type, CASE WHEN message_type = 'tool_result' THEN NULL"
    f" ELSE substr(content, 1, {_READ}) END, substr(thinking, 1, {_READ}) FROM messages",
    "tool_calls": "SELECT rowid, tool_name, params FROM tool_calls",
    "sessions": "SELECT rowid, title, task_description FROM sessions",
}


def create(conn: sqlite3.Connection) -> None:
    for sql in DDL:
        conn.execute(sql)


def state(conn: sqlite3.Connection) -> tuple[str, int] | None:
    row = conn.execute(f"SELECT model, dims FROM {STATE}").fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def held_model(conn: sqlite3.Connection) -> str | None:
    """The model of the ledger's vectors, None when it holds none."""
    held = state(conn)
    if held is None or not conn.execute("SELECT 1 FROM embedding_blocks LIMIT 1").fetchone():
        return None
    return held[0]


def status(conn: sqlite3.Connection) -> Status:
    held = state(conn)
    (count,) = conn.execute("SELECT count(*) FROM embedded").fetchone()
    (vectors,) = conn.execute("SELECT count(*) FROM embedding_keys").fetchone()
    model, dims = held if held else (None, 0)
    return Status(model, dims, int(count), int(vectors), backlog(conn))


def _marks(conn: sqlite3.Connection) -> dict[str, int]:
    found = dict(conn.execute(f"SELECT name, embedded_through FROM {MARKS}").fetchall())
    return {table: int(found.get(table, 0)) for table in TABLES}


def backlog(conn: sqlite3.Connection) -> int:
    """Rows whose passages are not embedded: above the marks, or queued again."""
    (count,) = conn.execute(f"SELECT count(*) FROM {PENDING}").fetchone()
    for table, mark in _marks(conn).items():
        (top,) = conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()
        if top > mark:  # rowids have gaps: count only when there is something to count
            (above,) = conn.execute(
                f"SELECT count(*) FROM {table} WHERE rowid > ?", (mark,)
            ).fetchone()
            count += above
    return int(count)


def prepare(conn: sqlite3.Connection, model: str, dims: int) -> bool:
    """Make the ledger's vectors `model`'s: those of another model go (True when they did)."""
    held = state(conn)
    if held == (model, dims):
        return False
    reset(conn)
    conn.execute(f"INSERT INTO {STATE} (id, model, dims) VALUES (1, ?, ?)", (model, dims))
    return held is not None


def reset(conn: sqlite3.Connection) -> None:
    """No vectors, no marks: every row is to be embedded again."""
    for table in (STATE, MARKS, PENDING, "embedded", "embedding_keys", "embedding_blocks"):
        conn.execute(f"DELETE FROM {table}")


def _kept(conn: sqlite3.Connection, table: str) -> bool:
    """Whether the ledger keeps vectors for `table`'s rows: not while a migration older than
    the vectors' own (m024) rewrites them."""
    return table in SOURCES_OF and bool(
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (MARKS,)).fetchone()
    )


def requeue(
    conn: sqlite3.Connection, table: str, source: str, where: str, params: Sequence[object]
) -> None:
    """The rows `t` of `source … WHERE where`, about to be rewritten, are embedded again."""
    if not _kept(conn, table):
        return
    conn.execute(
        f"INSERT OR IGNORE INTO {PENDING} (name, rid) SELECT ?, t.rowid FROM {source}"
        f" WHERE ({where}) AND t.rowid <= (SELECT embedded_through FROM {MARKS} WHERE name = ?)",
        (table, *params, table),
    )


def forget(conn: sqlite3.Connection, table: str, where: str, params: Sequence[object]) -> None:
    """Before `DELETE FROM table WHERE where`: the rows' passages go with them."""
    if not _kept(conn, table):
        return
    rows = f"(SELECT rowid FROM {table} WHERE {where})"
    marks = ", ".join("?" * len(SOURCES_OF[table]))
    conn.execute(
        f"DELETE FROM embedded WHERE source IN ({marks}) AND rid IN {rows}",
        (*SOURCES_OF[table], *params),
    )
    conn.execute(f"DELETE FROM {PENDING} WHERE name = ? AND rid IN {rows}", (table, *params))


def after_delete(conn: sqlite3.Connection, table: str) -> None:
    """Rowids above the table's new top are given out again: they must count as new."""
    if _kept(conn, table):
        conn.execute(
            f"UPDATE {MARKS} SET embedded_through = (SELECT coalesce(max(rowid), 0) FROM {table})"
            f" WHERE name = ? AND embedded_through > (SELECT coalesce(max(rowid), 0) FROM {table})",
            (table,),
        )


def prune(conn: sqlite3.Connection) -> int:
    """Drop the vectors no passage stands on any more (deleted rows', and rewritten rows' old
    texts: a row waiting to be embedded again loses its old passages first), so that no trace
    of a text that was redacted or deleted is left in the ledger. Returns the vectors dropped."""
    from tracehouse.search.vectors import prune_blocks

    for table, sources in SOURCES_OF.items():
        marks = ", ".join("?" * len(sources))
        conn.execute(
            f"DELETE FROM embedded WHERE source IN ({marks}) AND rid IN"
            f" (SELECT rid FROM {PENDING} WHERE name = ?)",
            (*sources, table),
        )
    live = {int(k) for (k,) in conn.execute("SELECT DISTINCT text_key FROM embedded")}
    blocks = conn.execute("SELECT block, keys, vectors FROM embedding_blocks").fetchall()
    dropped = prune_blocks(blocks, live, conn.execute)
    conn.execute("DELETE FROM embedding_keys WHERE text_key NOT IN (SELECT text_key FROM embedded)")
    return dropped


def _passages(table: str, row: tuple[object, ...]) -> list[Passage]:
    rid = int(row[0])  # type: ignore[call-overload]
    text = [v if isinstance(v, str) else None for v in row[1:]]
    if table == "messages":
        return passages.of_message(rid, text[0], text[1], text[2])
    if table == "tool_calls":
        return passages.of_tool_call(rid, text[0], text[1])
    return passages.of_session(rid, text[0], text[1])


def _next_rows(
    conn: sqlite3.Connection, limit: int
) -> tuple[str, list[tuple[object, ...]], int | None]:
    """The next rows to embed: (table, rows, the mark they take it to, None for queued rows)."""
    for table in TABLES:
        queued = conn.execute(
            f"{_ROWS[table]} WHERE rowid IN (SELECT rid FROM {PENDING} WHERE name = ?"
            " ORDER BY rid LIMIT ?)",
            (table, limit),
        ).fetchall()
        if queued or conn.execute(f"SELECT 1 FROM {PENDING} WHERE name = ?", (table,)).fetchone():
            return table, queued, None
    for table, mark in _marks(conn).items():
        rows = conn.execute(
            f"{_ROWS[table]} WHERE rowid > ? ORDER BY rowid LIMIT ?", (mark, limit)
        ).fetchall()
        if rows:
            return table, rows, int(rows[-1][0])
    return "", [], None


def embed_step(conn: sqlite3.Connection, embedder: Embedder, limit: int = STEP_ROWS) -> int:
    """Embed the next `limit` rows of the backlog, in the caller's transaction: returns the rows
    done (0: none left). Texts embedded before keep their vectors."""
    from tracehouse.search.embedders import beside

    table, rows, mark = _next_rows(conn, limit)
    if not table:
        return 0
    if mark is None:  # queued rows: what they held before goes, and their place in the queue
        ids = orjson.dumps([r[0] for r in rows]).decode()
        sources = SOURCES_OF[table]
        conn.execute(
            f"DELETE FROM embedded WHERE source IN ({', '.join('?' * len(sources))})"
            " AND rid IN (SELECT value FROM json_each(?))",
            (*sources, ids),
        )
        gone = conn.execute(
            f"DELETE FROM {PENDING} WHERE name = ? AND rid IN (SELECT rid FROM {PENDING}"
            " WHERE name = ? ORDER BY rid LIMIT ?)",
            (table, table, limit),
        )
        done = max(len(rows), gone.rowcount)
    else:
        conn.execute(
            f"INSERT INTO {MARKS} (name, embedded_through) VALUES (?, ?) ON CONFLICT (name)"
            " DO UPDATE SET embedded_through = excluded.embedded_through",
            (table, mark),
        )
        done = len(rows)
    found = [p for row in rows for p in _passages(table, row)]
    new = _unknown(conn, found)
    made = beside(embedder, list(new.values()))
    conn.executemany(
        "INSERT OR REPLACE INTO embedded (source, rid, part, text_key) VALUES (?, ?, ?, ?)",
        [(p.source, p.rid, p.part, p.key) for p in found],
    )
    if new:  # only then NumPy: rows written again with the texts they held need no vectors
        import numpy as np

        from tracehouse.search import vectors

        keys = np.fromiter(new, dtype=np.int64, count=len(new))
        _append(conn, vectors.Block.of(keys, made()), embedder.dims)
    return done


def _unknown(conn: sqlite3.Connection, found: list[Passage]) -> dict[int, str]:
    """The texts of `found` that no vector stands for yet, by key."""
    texts = {p.key: p.text for p in found}
    if not texts:
        return {}
    known = conn.execute(
        "SELECT k.text_key FROM json_each(?) AS j JOIN embedding_keys k ON k.text_key = j.value",
        (orjson.dumps(list(texts)).decode(),),
    ).fetchall()
    for (key,) in known:
        texts.pop(key, None)
    return texts


def _append(conn: sqlite3.Connection, block: Block, dims: int) -> None:
    from tracehouse.search.vectors import Block, placed

    last = conn.execute(
        "SELECT block, keys, vectors FROM embedding_blocks ORDER BY block DESC LIMIT 1"
    ).fetchone()
    merged, fresh = placed(None if last is None else Block(last[1], last[2]), block, dims)
    numbered: list[tuple[list[int], int]] = []  # the keys added to each block
    if merged is not None:
        conn.execute(
            "UPDATE embedding_blocks SET keys = ?, vectors = ? WHERE block = ?",
            (merged.keys, merged.vectors, last[0]),
        )
        numbered.append((merged.key_list()[len(last[1]) // 8 :], int(last[0])))
    for piece in fresh:
        cursor = conn.execute(
            "INSERT INTO embedding_blocks (keys, vectors) VALUES (?, ?)",
            (piece.keys, piece.vectors),
        )
        numbered.append((piece.key_list(), int(cursor.lastrowid or 0)))
    conn.executemany(
        "INSERT OR REPLACE INTO embedding_keys (text_key, block) VALUES (?, ?)",
        [(key, number) for keys, number in numbered for key in keys],
    )


def nearest(conn: sqlite3.Connection, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every text key held and its cosine with `query`, best first."""
    from tracehouse.search.vectors import nearest as scan

    held = state(conn)
    if held is None:
        import numpy as np

        return np.empty(0, np.int64), np.empty(0, np.float32)
    blocks = conn.execute("SELECT keys, vectors FROM embedding_blocks")
    return scan(query, blocks, held[1])


def places(conn: sqlite3.Connection, keys: Sequence[int]) -> list[tuple[str, int, int, int]]:
    """Where each of `keys` stands in the ledger: (source, rid, part, text_key) rows."""
    return [
        (str(s), int(r), int(p), int(k))
        for s, r, p, k in conn.execute(
            "SELECT e.source, e.rid, e.part, e.text_key FROM json_each(?) AS j"
            " CROSS JOIN embedded e ON e.text_key = j.value",
            (orjson.dumps([int(k) for k in keys]).decode(),),
        )
    ]


def passage_text(conn: sqlite3.Connection, source: str, rid: int, part: int) -> str:
    """The text of one passage, made again from its row (to cut a snippet from)."""
    table = passages.TABLE_OF[source]
    row = conn.execute(f"{_ROWS[table]} WHERE rowid = ?", (rid,)).fetchone()
    if row is None:
        return ""
    for p in _passages(table, row):
        if p.source == source and p.part == part:
            return p.text
    return ""
