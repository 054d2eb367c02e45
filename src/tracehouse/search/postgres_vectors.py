"""Search by meaning on PostgreSQL: the same passages, text keys and blocks as on SQLite
(`sqlite_vectors`), in the tables of migration 0022.

A row is embedded when `embedded_rows` holds it with the fingerprint it had then, so the
backlog is the rows missing there or changed since: a row rewritten by any writer (a gateway's
pushes, another machine's sync) is embedded again. Finding it reads every row's id and
fingerprint, so a sync asks only when it wrote rows or the last embedding stopped short.

Vectors are scored in NumPy over the blocks, exactly, as on SQLite. pgvector would keep the
scan in the server; it is not used here (the machine this was built on offers no build of it
for its PostgreSQL), and the blocks give the same answers on any server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from tracehouse.search import passages
from tracehouse.search.passages import Passage
from tracehouse.search.semantic import Status

if TYPE_CHECKING:
    import numpy as np

    from tracehouse.search.embedders import Embedder
    from tracehouse.search.vectors import Block

STEP_ROWS = 2000
TABLES = ("messages", "tool_calls", "sessions")
SOURCES_OF = {"messages": ("content", "thinking"), "tool_calls": ("tool",), "sessions": ("title",)}
# Each table's rows: id, the fingerprint a change shows in, and what its passages are made of.
_ROWS = {
    "messages": (
        "t.message_id",
        "t.fingerprint",
        f"t.message_type, CASE WHEN t.message_type = 'tool_result' THEN NULL"
        f" ELSE left(t.content, {passages.READ_CHARS}) END,"
        f" left(t.thinking, {passages.READ_CHARS})",
    ),
    "tool_calls": ("t.tool_call_id", "t.fingerprint", "t.tool_name, t.params::text"),
    # A session's row is rewritten whole by every import of it: its title is what counts.
    "sessions": (
        "t.session_id",
        "md5(coalesce(t.title, '') || chr(1) || coalesce(t.task_description, ''))",
        "t.title, t.task_description",
    ),
}


class Tx(Protocol):
    """The open transaction (`store/postgres/tx.PgTx`), with `?` placeholders."""

    def execute(self, sql: str, params: Sequence[Any]) -> int: ...

    def rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]: ...


def state(tx: Tx) -> tuple[str, int] | None:
    found = tx.rows("SELECT model, dims FROM embedding_state", ())
    return None if not found else (str(found[0][0]), int(found[0][1]))


def _waiting(table: str) -> str:
    key, fingerprint, _ = _ROWS[table]
    return (
        f" FROM {table} t LEFT JOIN embedded_rows r ON r.source_table = '{table}'"
        f" AND r.row_id = {key} WHERE r.row_id IS NULL OR r.fingerprint IS DISTINCT FROM"
        f" {fingerprint}"
    )


def held_model(tx: Tx) -> str | None:
    """The model of the ledger's vectors, None when it holds none."""
    held = state(tx)
    if held is None or not tx.rows("SELECT 1 FROM embedding_blocks LIMIT 1", ()):
        return None
    return held[0]


def backlog(tx: Tx) -> int:
    return sum(int(tx.rows(f"SELECT count(*){_waiting(t)}", ())[0][0]) for t in TABLES)


def status(tx: Tx) -> Status:
    held = state(tx)
    (count,) = tx.rows("SELECT count(*) FROM embedded", ())[0]
    (vectors,) = tx.rows("SELECT count(*) FROM embedding_keys", ())[0]
    model, dims = held if held else (None, 0)
    return Status(model, dims, int(count), int(vectors), backlog(tx))


def complete(tx: Tx) -> bool:
    """Whether the last embedding ran until it found nothing left to embed."""
    found = tx.rows("SELECT complete FROM embedding_state", ())
    return bool(found and found[0][0])


def finished(tx: Tx) -> None:
    tx.execute("UPDATE embedding_state SET complete = true", ())


def prepare(tx: Tx, model: str, dims: int) -> bool:
    """Make the ledger's vectors `model`'s: those of another model go (True when they did).
    The embedding that follows is not complete until `finished`."""
    held = state(tx)
    if held == (model, dims):
        tx.execute("UPDATE embedding_state SET complete = false", ())
        return False
    reset(tx)
    tx.execute("INSERT INTO embedding_state (id, model, dims) VALUES (1, ?, ?)", (model, dims))
    return held is not None


def reset(tx: Tx) -> None:
    for table in ("embedding_state", "embedded_rows", "embedded", "embedding_keys",
                  "embedding_blocks"):  # fmt: skip
        tx.execute(f"DELETE FROM {table}", ())


def prune(tx: Tx) -> int:
    """Drop the vectors no passage stands on any more (deleted rows', rewritten rows' old
    texts): what `compact` leaves of a text that was redacted or deleted. Returns the vectors
    dropped."""
    from tracehouse.search.vectors import prune_blocks

    for table in TABLES:  # rows changed since they were embedded: their old passages go
        key, fingerprint, _ = _ROWS[table]
        tx.execute(
            f"DELETE FROM embedded e USING {table} t, embedded_rows r"
            f" WHERE r.source_table = '{table}' AND r.row_id = {key}"
            f" AND r.fingerprint IS DISTINCT FROM {fingerprint}"
            f" AND e.source = ANY(?) AND e.row_id = r.row_id",
            (list(SOURCES_OF[table]),),
        )
        tx.execute(
            f"DELETE FROM embedded e WHERE e.source = ANY(?) AND NOT EXISTS"
            f" (SELECT 1 FROM {table} t WHERE {key} = e.row_id)",
            (list(SOURCES_OF[table]),),
        )
    live = {int(k) for (k,) in tx.rows("SELECT DISTINCT text_key FROM embedded", ())}
    blocks = tx.rows("SELECT block, keys, vectors FROM embedding_blocks", ())
    dropped = prune_blocks(blocks, live, tx.execute)
    tx.execute(
        "DELETE FROM embedding_keys k WHERE NOT EXISTS"
        " (SELECT 1 FROM embedded e WHERE e.text_key = k.text_key)",
        (),
    )
    return dropped


def _passages(table: str, row: tuple[Any, ...]) -> list[Passage]:
    rid, values = str(row[0]), [v if isinstance(v, str) else None for v in row[2:]]
    if table == "messages":
        return passages.of_message(rid, values[0], values[1], values[2])
    if table == "tool_calls":
        return passages.of_tool_call(rid, values[0], values[1])
    return passages.of_session(rid, values[0], values[1])


def embed_step(tx: Tx, embedder: Embedder, limit: int = STEP_ROWS) -> int:
    """Embed the next `limit` rows of the backlog in the caller's transaction: the rows done."""
    from tracehouse.search.embedders import beside

    # One embedding at a time over the ledger (a gateway's workers, a sync beside them): two
    # would take the same rows and add their vectors twice.
    tx.rows("SELECT pg_advisory_xact_lock(hashtext('tracehouse.embedding'))", ())
    for table in TABLES:
        key, fingerprint, columns = _ROWS[table]
        rows = tx.rows(f"SELECT {key}, {fingerprint}, {columns}{_waiting(table)} LIMIT ?", (limit,))
        if rows:
            break
    else:
        return 0
    ids = [str(r[0]) for r in rows]
    tx.execute(
        "DELETE FROM embedded WHERE source = ANY(?) AND row_id = ANY(?)",
        (list(SOURCES_OF[table]), ids),
    )
    found = [p for row in rows for p in _passages(table, row)]
    texts = {p.key: p.text for p in found}
    if texts:
        for (known,) in tx.rows(
            "SELECT text_key FROM embedding_keys WHERE text_key = ANY(?)", (list(texts),)
        ):
            texts.pop(int(known), None)
    made = beside(embedder, list(texts.values()))
    if found:
        tx.execute(
            "INSERT INTO embedded (source, row_id, part, text_key) SELECT * FROM"
            " unnest(?::text[], ?::text[], ?::integer[], ?::bigint[]) ON CONFLICT DO NOTHING",
            (
                [p.source for p in found],
                [str(p.rid) for p in found],
                [p.part for p in found],
                [p.key for p in found],
            ),
        )
    if texts:  # only then NumPy: rows written again with the texts they held need no vectors
        import numpy as np

        from tracehouse.search.vectors import Block

        keys = np.fromiter(texts, dtype=np.int64, count=len(texts))
        _append(tx, Block.of(keys, made()), embedder.dims)
    tx.execute(
        "INSERT INTO embedded_rows (source_table, row_id, fingerprint) SELECT ?, * FROM"
        " unnest(?::text[], ?::text[]) ON CONFLICT (source_table, row_id)"
        " DO UPDATE SET fingerprint = excluded.fingerprint",
        (table, ids, [r[1] for r in rows]),
    )
    return len(rows)


def _append(tx: Tx, block: Block, dims: int) -> None:
    from tracehouse.search.vectors import Block, placed

    last = tx.rows(
        "SELECT block, keys, vectors FROM embedding_blocks ORDER BY block DESC LIMIT 1", ()
    )
    held = Block(bytes(last[0][1]), bytes(last[0][2])) if last else None
    merged, fresh = placed(held, block, dims)
    numbered: list[tuple[list[int], int]] = []
    if merged is not None and held is not None:
        tx.execute(
            "UPDATE embedding_blocks SET keys = ?, vectors = ? WHERE block = ?",
            (merged.keys, merged.vectors, last[0][0]),
        )
        numbered.append((merged.key_list()[held.count :], int(last[0][0])))
    for piece in fresh:
        (number,) = tx.rows(
            "INSERT INTO embedding_blocks (keys, vectors) VALUES (?, ?) RETURNING block",
            (piece.keys, piece.vectors),
        )[0]
        numbered.append((piece.key_list(), int(number)))
    keys = [k for found, _ in numbered for k in found]
    blocks = [n for found, n in numbered for _ in found]
    tx.execute(
        "INSERT INTO embedding_keys (text_key, block) SELECT * FROM unnest(?::bigint[],"
        " ?::bigint[]) ON CONFLICT (text_key) DO UPDATE SET block = excluded.block",
        (keys, blocks),
    )


class BlockCache:
    """The blocks a long-lived store (a gateway's, an MCP server's) read before, by number and
    length: a block only grows (vectors are appended to the last one) until the vectors are
    made again, so a search asks the server for the new and grown blocks alone instead of
    every vector over the wire each time."""

    def __init__(self) -> None:
        self.model: tuple[str, int] | None = None
        self.blocks: dict[int, tuple[int, bytes, bytes]] = {}

    def current(self, tx: Tx, held: tuple[str, int]) -> list[tuple[bytes, bytes]]:
        if held != self.model:
            self.model, self.blocks = held, {}
        sizes = dict(tx.rows("SELECT block, length(keys) FROM embedding_blocks", ()))
        stale = [b for b, size in sizes.items() if self.blocks.get(b, (None,))[0] != size]
        for block in set(self.blocks) - set(sizes):
            del self.blocks[block]
        if stale:
            for block, keys, vectors in tx.rows(
                "SELECT block, keys, vectors FROM embedding_blocks WHERE block = ANY(?)", (stale,)
            ):
                self.blocks[int(block)] = (len(keys), bytes(keys), bytes(vectors))
        return [(keys, vectors) for _, keys, vectors in self.blocks.values()]


def nearest(tx: Tx, query: np.ndarray, cache: BlockCache) -> tuple[np.ndarray, np.ndarray]:
    """Every text key held and its cosine with `query`, best first."""
    from tracehouse.search.vectors import nearest as scan

    held = state(tx)
    if held is None:
        return scan(query, [], 0)
    return scan(query, cache.current(tx, held), held[1])


def places(tx: Tx, keys: Sequence[int]) -> list[tuple[str, str, int, int]]:
    """Where each of `keys` stands in the ledger: (source, row id, part, text_key) rows."""
    found = tx.rows(
        "SELECT source, row_id, part, text_key FROM embedded WHERE text_key = ANY(?)",
        ([int(k) for k in keys],),
    )
    return [(str(s), str(r), int(p), int(k)) for s, r, p, k in found]


def passage_text(tx: Tx, source: str, row_id: str, part: int) -> str:
    table = passages.TABLE_OF[source]
    key, fingerprint, columns = _ROWS[table]
    found = tx.rows(
        f"SELECT {key}, {fingerprint}, {columns} FROM {table} t WHERE {key} = ?", (row_id,)
    )
    for p in _passages(table, found[0]) if found else ():
        if p.source == source and p.part == part:
            return p.text
    return ""
