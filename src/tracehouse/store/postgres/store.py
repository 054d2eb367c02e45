"""The PostgreSQL session store: one ledger for a team, written by every machine at once."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
import psycopg
from psycopg.sql import SQL, Identifier

from tracehouse import retrying
from tracehouse.errors import StoreError, StoreLockedError, StoreUnavailableError
from tracehouse.model.columns import Kind, Table
from tracehouse.model.contract import ImportBatch, ImportResponse, now_iso, pushed_key
from tracehouse.model.tables import ALL_TABLES, CONTENT_TABLES, SESSIONS, TABLES_BY_NAME
from tracehouse.search.hits import Hit, SearchFilters
from tracehouse.search.postgres_vectors import BlockCache
from tracehouse.store import tombstones
from tracehouse.store.items import finish_sql, finish_values
from tracehouse.store.location import masked
from tracehouse.store.postgres import staging, tx, writer
from tracehouse.store.postgres.connect import connect, scrub
from tracehouse.store.postgres.migrations import applied, pending, upgrade
from tracehouse.store.protocol import BOOKKEEPING, SESSION_BOOKS, RunTotals, StoreInfo, Tx
from tracehouse.store.reads import unresolved_reject_units

if TYPE_CHECKING:
    from tracehouse.search.embedders import Embedder
    from tracehouse.search.query import Query
    from tracehouse.search.semantic import Status

T = TypeVar("T")
# Deadlocks and serialization failures roll the batch back whole; it is simply run again.
TXN_BACKOFF = retrying.Backoff(attempts=9, first=0.05, most=2.0)


class PostgresStore:
    backend = "postgresql"
    concurrent_writes = True

    def __init__(self, dsn: str, *, migrate: bool = True) -> None:
        """Connect and bring the schema up to date; with `migrate=False` the schema is left as
        it is, for `store migrate` to show and apply."""
        self.dsn = self.address = dsn
        self.location = masked(dsn)
        self.retry_log = retrying.RetryLog()
        self._blocks = BlockCache()  # the vectors' blocks this store has read (searches)
        self.conn = connect(dsn, self.retry_log)
        try:
            if migrate:
                upgrade(self.conn, self.location)
            else:
                pending(self.conn, self.location)  # still refuses a ledger of a newer schema
            # Temporary, this connection's own: a store opened without migrating (a gateway's
            # pooled connections, migrated once at start-up) writes through them too.
            staging.create_staging(self.conn)
            self.schema_version = len(applied(self.conn))
        except psycopg.Error as exc:
            self.conn.close()
            raise StoreError(
                f"{self.location}: cannot set up the ledger: {self._why(exc)}"
            ) from None
        except BaseException:
            self.conn.close()
            raise

    def pending_migrations(self) -> list[str]:
        return [m.label for m in pending(self.conn, self.location)]

    def migrate(self) -> list[str]:
        """Apply the pending migrations (under the advisory lock); returns their names."""
        waiting = self.pending_migrations()
        self.schema_version = upgrade(self.conn, self.location)
        staging.create_staging(self.conn)
        return waiting

    def _why(self, exc: BaseException) -> str:
        return scrub(str(exc), self.dsn)

    def _in_transaction(self, work: Callable[[tx.Conn], T]) -> T:
        """Run `work` in one transaction, again from the start after a deadlock or a
        serialization failure (with jittered backoff); a lost server is one clear error."""

        def once() -> T:
            with self.conn.transaction():
                return work(self.conn)

        try:
            return retrying.call(
                once, reason=_conflict_reason, backoff=TXN_BACKOFF, log=self.retry_log
            )
        except writer.RETRYABLE as exc:
            raise StoreLockedError(
                f"{self.location}: gave up after {TXN_BACKOFF.attempts} tries: {self._why(exc)}"
            ) from None
        except psycopg.OperationalError as exc:
            raise StoreUnavailableError(
                f"{self.location}: lost the PostgreSQL server: {self._why(exc)}"
            ) from None

    # -- writes -------------------------------------------------------------------------------

    def import_group(
        self, *, builders: bool = False
    ) -> AbstractContextManager[Callable[[ImportBatch], ImportResponse]]:
        return nullcontext(self.import_batch)  # a transaction each: nothing gained by more

    def import_batch(self, batch: ImportBatch) -> ImportResponse:
        return self._in_transaction(lambda conn: writer.import_batch(conn, batch))

    def start_run(self, run_id: str, mode: str) -> None:
        started = now_iso()  # before any retry: the run's time includes the waits
        self._in_transaction(lambda conn: writer.ensure_run(conn, run_id, mode, started))

    def finish_run(self, run_id: str, totals: RunTotals) -> None:
        def finish(conn: tx.Conn) -> None:
            writer.ensure_run(conn, run_id, "backfill")
            row = conn.execute(
                "SELECT retry_reasons, redactions FROM import_runs WHERE run_id = %s", (run_id,)
            ).fetchone()
            taken = self.retry_log.take()
            held, redactions = row if row else (None, None)
            values = finish_values(run_id, totals, held, taken, redactions)
            conn.execute(finish_sql("%s", "%s::json"), values)

        self._in_transaction(finish)
        self._analyze_after(run_id)

    def _analyze_after(self, run_id: str) -> None:
        """Refresh the planner's statistics of the tables a run grew by a tenth or more, the
        threshold autovacuum uses: a server may run without it (Debian's test servers do), and
        a search planned from the statistics of an empty ledger took seconds, not milliseconds.

        One ANALYZE at a time: runs that finish together (a team's laptops pushing through a
        gateway) skip while another's is under way, rather than each analyzing the same tables
        again in turn (eight pushers spent a second each waiting to)."""
        with self.conn.transaction():
            # keyed by schema: the ledgers of one database do not wait for each other
            if not self.conn.execute(
                "SELECT pg_try_advisory_xact_lock("
                "hashtext('tracehouse analyze ' || current_schema())::bigint)"
            ).fetchone()[0]:  # type: ignore[index]
                return
            rows = self.conn.execute(
                "SELECT c.relname FROM pg_class c, import_runs r"
                " WHERE r.run_id = %s AND c.relnamespace = current_schema()::regnamespace"
                " AND c.relname = ANY(%s) AND coalesce(r.rows_written, 0)"
                "     > 1000 + 0.1 * greatest(c.reltuples, 0)",
                (run_id, [SESSIONS.name, *(t.name for t in CONTENT_TABLES.values())]),
            ).fetchall()
            for (table,) in rows:
                self.conn.execute(SQL("ANALYZE {}").format(Identifier(table)))

    def add_absent(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        spec = TABLES_BY_NAME[table]
        if table not in (*BOOKKEEPING, *SESSION_BOOKS):
            raise ValueError(f"{table} is not a bookkeeping table")
        values = ", ".join("%s::json" if c.kind is Kind.JSON else "%s" for c in spec.columns)
        sql = (
            f"INSERT INTO {table} ({', '.join(spec.names)}) VALUES ({values})"
            " ON CONFLICT DO NOTHING"
        )
        params = [[row.get(n) for n in spec.names] for row in rows]

        def merge(conn: tx.Conn) -> int:
            with conn.cursor() as cur:
                cur.executemany(sql, params)
                return cur.rowcount if params else 0

        return self._in_transaction(merge)

    def delete_sessions(self, session_ids: Sequence[str], deleted_at: str) -> dict[str, int]:
        return self._in_transaction(
            lambda conn: tombstones.delete_in(tx.PgTx(conn), session_ids, deleted_at)
        )

    def restore_sessions(self, session_ids: Sequence[str]) -> list[dict[str, Any]]:
        return self._in_transaction(lambda conn: tombstones.restore_in(tx.PgTx(conn), session_ids))

    def save_export_mark(self, target: str, format: str, exported_at: str, sessions: int) -> None:
        def save(conn: tx.Conn) -> None:
            conn.execute(
                "INSERT INTO export_marks (target, format, exported_at, sessions)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (target, format) DO UPDATE"
                " SET exported_at = excluded.exported_at, sessions = excluded.sessions",
                (target, format, exported_at, sessions),
            )

        self._in_transaction(save)

    def mark_missing(
        self,
        provider: str,
        unit_keys: Iterable[str],
        at: str,
        run_id: str,
        machine: str | None = None,
    ) -> int:
        keys = list(unit_keys)
        cursor_keys = [pushed_key(machine, k) for k in keys] if machine else keys

        def mark(conn: tx.Conn) -> int:
            flagged = conn.execute(
                "UPDATE sessions SET source_missing_at = %s WHERE source_provider = %s"
                " AND source_path = ANY(%s) AND source_missing_at IS NULL"
                " AND (%s::text IS NULL OR host = %s)",
                (at, provider, keys, machine, machine),
            ).rowcount
            conn.execute(
                "UPDATE watermarks SET cursor = (coalesce(cursor::jsonb, '{}')"
                " || '{\"missing\": true}')::json, run_id = %s"
                " WHERE source_provider = %s AND unit_key = ANY(%s)",
                (run_id, provider, cursor_keys),
            )
            return flagged

        return self._in_transaction(mark) if keys else 0

    def unresolved_rejects(self, provider: str, location: str) -> list[str]:
        return unresolved_reject_units(self, provider, location)

    def write(self, work: Callable[[Tx], T]) -> T:
        return self._in_transaction(lambda conn: work(tx.PgTx(conn)))

    # -- reads --------------------------------------------------------------------------------

    def watermarks(
        self, provider: str, unit_keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        if unit_keys is None:
            rows = self.conn.execute(
                "SELECT unit_key, cursor FROM watermarks WHERE source_provider = %s", (provider,)
            )
        else:
            rows = self.conn.execute(
                "SELECT unit_key, cursor FROM watermarks WHERE source_provider = %s"
                " AND unit_key = ANY(%s)",
                (provider, list(unit_keys)),
            )
        return {key: orjson.loads(cursor) if cursor else {} for key, cursor in rows}

    def watermark_states(self, provider: str, unit_keys: Iterable[str]) -> dict[str, Any]:
        rows = self.conn.execute(
            "SELECT unit_key, state FROM watermarks WHERE source_provider = %s"
            " AND state IS NOT NULL AND unit_key = ANY(%s)",
            (provider, list(unit_keys)),
        )
        return {key: orjson.loads(state) for key, state in rows}

    def info(self) -> StoreInfo:
        counts = {}
        for t in ALL_TABLES:
            row = self.conn.execute(f"SELECT count(*) FROM {t.name}").fetchone()
            counts[t.name] = int(row[0]) if row else 0
        return StoreInfo(self.location, self.backend, self.schema_version, counts)

    def rows(self, table: str) -> Iterator[dict[str, Any]]:
        spec = TABLES_BY_NAME[table]
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT {', '.join(spec.names)} FROM {table} ORDER BY {_byte_order(spec)}")
            for values in cur:
                yield dict(zip(spec.names, values, strict=True))

    def row_chunks(self, table: str, size: int = 1000) -> Iterator[list[tuple[Any, ...]]]:
        spec = TABLES_BY_NAME[table]
        # A server-side cursor: a client-side one would hold the whole table in memory.
        with self.conn.transaction(), self.conn.cursor(name=f"rows_{table}") as cur:
            cur.execute(f"SELECT {', '.join(spec.names)} FROM {table}")
            while chunk := cur.fetchmany(size):
                yield chunk

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(tx.placeholders(sql), tuple(params))  # type: ignore[arg-type]
        if cursor.description is None:
            return []
        names = [d.name for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def search_lag(self) -> int:
        return 0  # the tsvector columns are generated with their rows

    def search(
        self,
        query: str,
        filters: SearchFilters | None = None,
        *,
        mode: str = "lexical",
        embedder: Embedder | None = None,
    ) -> list[Hit]:
        """Search the ledger by its words (`search/query.py` for the syntax), by meaning, or
        both (`search/semantic.py`)."""
        from tracehouse.search.query import parse

        filters = filters or SearchFilters()
        if mode == "lexical":
            return self._lexical(parse(query), filters)
        from tracehouse.search import postgres_semantic, postgres_vectors, semantic

        with self.conn.transaction():
            reader = tx.PgTx(self.conn)
            model = semantic.required(postgres_vectors.held_model(reader), embedder)
            words = parse(query) if mode == "hybrid" else None
            lexical = None if words is None else lambda deep: self._lexical(words, deep)
            return postgres_semantic.search(reader, model, query, filters, self._blocks, lexical)

    def _lexical(self, query: Query, filters: SearchFilters) -> list[Hit]:
        from tracehouse.search import postgres_query as fts

        with self.conn.transaction():
            # The planner prices `@@` as cheap and scans the table for a common word, reading
            # every row's TOASTed tsvector; the GIN index answers without reading them.
            self.conn.execute("SET LOCAL enable_seqscan = off")
            return fts.search(self.query, query, filters)

    def embedding_model(self) -> str | None:
        from tracehouse.search import postgres_vectors

        with self.conn.transaction():
            return postgres_vectors.held_model(tx.PgTx(self.conn))

    def embedding_status(self) -> Status:
        from tracehouse.search import postgres_vectors

        with self.conn.transaction():
            return postgres_vectors.status(tx.PgTx(self.conn))

    def embedding_backlog(self, *, wrote: bool = True) -> int:
        """Rows not embedded yet. Counting them reads every row's fingerprint: a caller that
        wrote nothing (a sync with nothing new) is told 0, unless the last embedding stopped
        before it finished."""
        from tracehouse.search import postgres_vectors

        with self.conn.transaction():
            reader = tx.PgTx(self.conn)
            if not wrote and postgres_vectors.complete(reader):
                return 0
            return postgres_vectors.backlog(reader)

    def embed_backlog(
        self, embedder: Embedder, progress: Callable[[int, int], None] | None = None,
        *, again: bool = False,
    ) -> int:  # fmt: skip
        from tracehouse.search import postgres_vectors

        with self.conn.transaction():
            writer = tx.PgTx(self.conn)
            if again:
                postgres_vectors.reset(writer)
            postgres_vectors.prepare(writer, embedder.name, embedder.dims)
            total = postgres_vectors.backlog(writer)
        done = 0
        while True:
            with self.conn.transaction():
                step = postgres_vectors.embed_step(tx.PgTx(self.conn), embedder)
            if not step:
                with self.conn.transaction():
                    postgres_vectors.finished(tx.PgTx(self.conn))
                return done
            done += step
            if progress is not None:
                progress(done, total)

    def compact(self) -> None:
        """Leave no copy of rewritten text behind (`secrets redact`): the vectors of texts no
        row holds dropped, the content tables rewritten whole (VACUUM FULL takes each one's
        lock while it runs)."""
        from tracehouse.model.tables import CONTENT_TABLES
        from tracehouse.search import postgres_vectors

        with self.conn.transaction():
            postgres_vectors.prune(tx.PgTx(self.conn))

        names = [t.name for t in CONTENT_TABLES.values()]
        for name in ("sessions", *names, "watermarks", "rejects", "embedding_blocks"):
            self.conn.execute(f"VACUUM FULL {name}")

    def close(self) -> None:
        self.conn.close()


def _conflict_reason(exc: BaseException) -> str | None:
    if isinstance(exc, psycopg.errors.DeadlockDetected):
        return "deadlock"
    if isinstance(exc, psycopg.errors.SerializationFailure):
        return "serialization failure"
    return None


def _byte_order(spec: Table) -> str:
    """Primary-key order in bytes, as SQLite sorts, whatever the database's collation."""
    return ", ".join(f'{key} COLLATE "C"' for key in spec.primary_key)
