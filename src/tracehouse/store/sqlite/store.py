"""The SQLite session store: the default ledger, one file in the user's data directory."""

from __future__ import annotations

import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tracehouse import retrying
from tracehouse.errors import StoreError, StoreLockedError
from tracehouse.model.contract import ImportBatch, ImportResponse, now_iso
from tracehouse.model.tables import ALL_TABLES, TABLES_BY_NAME
from tracehouse.search import sqlite_index, sqlite_vectors
from tracehouse.search.hits import Hit, SearchFilters
from tracehouse.search.sqlite_builders import IndexBuilders
from tracehouse.sqlite_binding import bind_directly
from tracehouse.state import scratch
from tracehouse.store import tombstones
from tracehouse.store.items import finish_sql, finish_values
from tracehouse.store.protocol import BOOKKEEPING, SESSION_BOOKS, RunTotals, StoreInfo, Tx
from tracehouse.store.reads import unresolved_reject_units
from tracehouse.store.sqlite import apply, reads, usage_slots, writer
from tracehouse.store.sqlite.checkpointer import Checkpointer
from tracehouse.store.sqlite.connection import (
    BUSY_TIMEOUT_MS,
    LOCK_BACKOFF,
    apply_pragmas,
    begin_first_load,
    create_private,
    end_first_load,
    lock_reason,
)
from tracehouse.store.sqlite.migrations import applied, pending, upgrade

if TYPE_CHECKING:
    from tracehouse.search.embedders import Embedder
    from tracehouse.search.semantic import Status

T = TypeVar("T")

# A group import's page cache (a backfill's writer). Where the writer is the wall, with 4 cores
# or more: on the 880 MB bench corpus it spent 10-15% less time writing and committing at 64 MB
# than at 24 MB (128 MB was no faster). On fewer cores, where parsing is the wall, the 951 MB
# corpus took as long at 12 MB as at 24 MB and the run held 14 MB less (three interleaved runs
# each; at 8 MB, 19 MB less but 2% slower; at 64 MB, 43 MB more and no faster).
GROUP_CACHE_KIB = 64 * 1024
FEW_CORES_GROUP_CACHE_KIB = 12 * 1024
GROUP_CACHE_CORES = 4
# In a long import group, the search index is flushed every this many rows: indexing a whole
# 256 MB group at its end, with nothing left to overlap it, cost more than it saved.
INDEX_ROWS = 20_000


class SqliteStore:
    backend = "sqlite"
    concurrent_writes = False  # one writer at a time: more queue on its lock

    def __init__(
        self,
        path: Path,
        *,
        create: bool = True,
        migrate: bool = True,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        """Open (or create) a ledger and bring its schema up to date; with `migrate=False` the
        schema is left as it is, for `store migrate` to show and apply."""
        self.path = Path(path).expanduser()
        self.retry_log = retrying.RetryLog()
        # Seconds an import spent bringing the search index up to date and committing, and
        # checkpoints beside it, for a run's phases (`SyncReport.book_store_timings`).
        self.timings: defaultdict[str, float] = defaultdict(float)
        self._checkpointer: Checkpointer | None = None
        # Whether this run's group imports load an empty ledger with a rollback journal
        # (`begin_first_load`); None until a run's first group decides.
        self._first_load: bool | None = None
        self._busy_timeout_ms = busy_timeout_ms
        self._builders: IndexBuilders | None = None
        self.location = self.address = str(self.path)
        if not self.path.exists():
            if not create:
                raise StoreError(f"{self.path}: no ledger here (run `tracehouse store init`)")
            create_private(self.path)
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            apply_pragmas(self.conn, busy_timeout_ms)
            bind_directly()
            sqlite_index.register(self.conn)
            if migrate:
                upgrade(self.conn, self.path)
            else:
                pending(self.conn, self.path)  # still refuses a ledger of a newer schema
            self.schema_version = len(applied(self.conn))
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a tracehouse ledger ({exc})") from None
        self._statements = apply.Statements()
        self._readers: list[sqlite3.Connection] = []

    # -- schema ---------------------------------------------------------------------------------

    def pending_migrations(self) -> list[str]:
        return pending(self.conn, self.path)

    def migrate(self) -> list[str]:
        """Apply the pending migrations; returns their names."""
        waiting = self.pending_migrations()
        self.schema_version = upgrade(self.conn, self.path)
        return waiting

    # -- transactions -----------------------------------------------------------------------

    @contextmanager
    def transaction(self, *, timed: bool = False) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE, retried with backoff while another writer holds the lock (each try
        already waits `busy_timeout` inside SQLite). `timed`: its COMMIT counts in `timings`
        (an import's, which a run's "write" phase encloses)."""
        try:
            retrying.call(
                lambda: self.conn.execute("BEGIN IMMEDIATE"),
                reason=lock_reason,
                backoff=LOCK_BACKOFF,
                log=self.retry_log,
            )
        except sqlite3.OperationalError as exc:
            if lock_reason(exc) is None:
                raise
            raise StoreLockedError(
                f"{self.path}: the ledger stayed locked by another writer; try again"
            ) from None
        try:
            yield self.conn
        except BaseException:
            if self.conn.in_transaction:  # some errors (a full disk) have rolled it back
                self.conn.execute("ROLLBACK")
            raise
        began = time.perf_counter()
        self.conn.execute("COMMIT")
        if timed:
            self.timings["commit"] += time.perf_counter() - began
        if self._checkpointer is not None:
            self._checkpointer.committed()

    # -- writes -------------------------------------------------------------------------------

    @contextmanager
    def _import_transaction(self) -> Iterator[sqlite3.Connection]:
        """An import's transaction, with temporary storage in memory while it lasts.

        Each item of a batch is a savepoint, and SQLite copies every page an item changes that
        existed before it into a sub-journal, which spills to a temporary file past 64 KiB: on
        the bench corpus 2.6 GB of the writer's 4.1 GB of write() calls went there. One item's
        sub-journal holds the pages it changed, mostly index pages. Only imports: a reader's sort
        of a whole ledger (an export) must still spill to disk. Index builders keep their state
        in the transaction's TEMP tables, and commit or roll back as it does."""
        builders = self._builders
        self.conn.execute("PRAGMA temp_store = MEMORY")
        try:
            with self.transaction(timed=True) as conn:
                if builders is not None:
                    builders.begin(conn)
                yield conn
                if builders is not None:
                    builders.before_commit(conn)
        except BaseException:
            if builders is not None:
                builders.rolled_back()
            raise
        finally:
            self.conn.execute("PRAGMA temp_store = DEFAULT")
        if builders is not None:
            builders.committed()

    def import_batch(self, batch: ImportBatch) -> ImportResponse:
        try:
            with self._import_transaction() as conn:
                response = writer.import_batch(conn, self._statements, batch, alone=True)
                self._flush_index(conn)
                return response
        except writer.ItemFailed:  # rolled back: again, each item alone
            with self._import_transaction() as conn:
                response = writer.import_batch(conn, self._statements, batch, isolated=True)
                self._flush_index(conn)
                return response

    @contextmanager
    def import_group(
        self, *, builders: bool = False
    ) -> Iterator[Callable[[ImportBatch], ImportResponse]]:
        """Several batches in one transaction; the search index is brought up to date every
        INDEX_ROWS rows and at the end (one FTS5 segment per step, none per batch). From the
        first group on, an empty ledger is loaded with a rollback journal until the run ends
        (`begin_first_load`), any other with checkpoints beside the writer (`Checkpointer`); the
        page cache is GROUP_CACHE_KIB on a machine of GROUP_CACHE_CORES or more, else
        FEW_CORES_GROUP_CACHE_KIB. With `builders`, a first load's two large search indexes are
        built beside the writer (`search/sqlite_builders.py`) and adopted when the run finishes."""
        if self._first_load is None:
            self._first_load = begin_first_load(self.conn)
            many = (os.cpu_count() or 1) >= GROUP_CACHE_CORES
            cache_kib = GROUP_CACHE_KIB if many else FEW_CORES_GROUP_CACHE_KIB
            self.conn.execute(f"PRAGMA cache_size = -{cache_kib}")
            if self._first_load and builders:
                self._builders = IndexBuilders.start(self.conn, self.path)
        if not self._first_load and self._checkpointer is None:
            self._checkpointer = Checkpointer(self.path, self._busy_timeout_ms, self.timings)
            self.conn.execute("PRAGMA wal_autocheckpoint = 0")
        with self._import_transaction() as conn:
            unindexed = 0

            def write(batch: ImportBatch) -> ImportResponse:
                nonlocal unindexed
                response = writer.import_batch(conn, self._statements, batch)
                unindexed += response.rows_written
                if unindexed >= INDEX_ROWS:
                    self._flush_index(conn)
                    unindexed = 0
                return response

            yield write
            self._flush_index(conn)

    def _flush_index(self, conn: sqlite3.Connection) -> None:
        began = time.perf_counter()
        sqlite_index.flush(conn)
        if self._builders is not None:
            self._builders.forward(conn)
        self.timings["index"] += time.perf_counter() - began

    def _catch_up(self, builders: IndexBuilders | None = None) -> None:
        """Adopt what `builders` finished, then index whatever the ledger's own index still
        misses (`sqlite_index.unindexed`: builders let go, or a run killed while they built).
        Booked as the "adopt" phase, outside any import's "write", where "index" and "commit"
        are."""
        if builders is None and not sqlite_index.unindexed(self.conn):
            return
        began = time.perf_counter()
        enclosed = {k: self.timings.get(k, 0.0) for k in ("index", "commit")}
        try:
            if builders is not None:
                seconds = builders.finish_into(self.path, self._busy_timeout_ms)
                if seconds is not None:
                    self.timings["build"] += seconds
            if sqlite_index.unindexed(self.conn):
                with self._import_transaction() as conn:
                    self._flush_index(conn)
        finally:
            self.timings.update(enclosed)
            self.timings["adopt"] += time.perf_counter() - began

    def _let_go_builders(self) -> None:
        builders, self._builders = self._builders, None
        if builders is not None:
            builders.let_go()

    def start_run(self, run_id: str, mode: str) -> None:
        started = now_iso()  # before any wait for the lock: the run's time includes it
        with self.transaction() as conn:
            writer.ensure_run(conn, run_id, mode, started)
        # A run killed while its indexes were built beside it: its builders' scratch databases
        # go, and what the ledger's own index misses is indexed now.
        scratch.remove_leftovers(str(self.path.parent))
        self._catch_up()

    def finish_run(self, run_id: str, totals: RunTotals) -> None:
        builders, self._builders = self._builders, None
        self._catch_up(builders)  # the indexes built beside the writer become the ledger's
        with self.transaction() as conn:
            writer.ensure_run(conn, run_id, "backfill")
            held, redactions = conn.execute(
                "SELECT retry_reasons, redactions FROM import_runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            taken = self.retry_log.take()
            values = finish_values(run_id, totals, held, taken, redactions)
            conn.execute(finish_sql("?", "?"), values)
        self._end_first_load()

    def _end_first_load(self) -> None:
        if self._first_load:
            end_first_load(self.conn)
        self._first_load = None  # the next run's first group decides again

    def add_absent(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        spec = TABLES_BY_NAME[table]
        if table not in (*BOOKKEEPING, *SESSION_BOOKS):
            raise ValueError(f"{table} is not a bookkeeping table")
        sql = (
            f"INSERT INTO {table} ({', '.join(spec.names)})"
            f" VALUES ({', '.join('?' * len(spec.names))}) ON CONFLICT DO NOTHING"
        )
        with self.transaction() as conn:
            before = conn.total_changes
            conn.executemany(sql, ([row.get(n) for n in spec.names] for row in rows))
            return conn.total_changes - before

    def rebuild_usage(self) -> int:
        """Sum the usage rollup again from every turn (`usage_slots.rebuild`); its rows."""
        with self.transaction() as conn:
            return usage_slots.rebuild(conn)

    def delete_sessions(self, session_ids: Sequence[str], deleted_at: str) -> dict[str, int]:
        self._let_go_builders()  # their index would keep what is deleted here
        with self.transaction() as conn:
            return tombstones.delete_in(apply.SqliteTx(conn), session_ids, deleted_at)

    def restore_sessions(self, session_ids: Sequence[str]) -> list[dict[str, Any]]:
        self._let_go_builders()
        with self.transaction() as conn:
            return tombstones.restore_in(apply.SqliteTx(conn), session_ids)

    def save_export_mark(self, target: str, format: str, exported_at: str, sessions: int) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO export_marks (target, format, exported_at, sessions)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (target, format) DO UPDATE"
                " SET exported_at = excluded.exported_at, sessions = excluded.sessions",
                (target, format, exported_at, sessions),
            )

    def mark_missing(
        self,
        provider: str,
        unit_keys: Iterable[str],
        at: str,
        run_id: str,
        machine: str | None = None,
    ) -> int:
        with self.transaction() as conn:
            return writer.mark_missing(conn, provider, unit_keys, at, run_id, machine)

    def unresolved_rejects(self, provider: str, location: str) -> list[str]:
        return unresolved_reject_units(self, provider, location)

    def write(self, work: Callable[[Tx], T]) -> T:
        self._let_go_builders()
        with self.transaction() as conn:
            return work(apply.SqliteTx(conn))

    # -- reads --------------------------------------------------------------------------------

    def watermarks(
        self, provider: str, unit_keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        return reads.watermarks(self.conn, provider, unit_keys)

    def watermark_states(self, provider: str, unit_keys: Iterable[str]) -> dict[str, Any]:
        return reads.watermark_states(self.conn, provider, unit_keys)

    def info(self) -> StoreInfo:
        counts = {
            t.name: self.conn.execute(f"SELECT count(*) FROM {t.name}").fetchone()[0]
            for t in ALL_TABLES
        }
        return StoreInfo(self.location, self.backend, len(applied(self.conn)), counts)

    def rows(self, table: str) -> Iterator[dict[str, Any]]:
        spec = TABLES_BY_NAME[table]
        cursor = self.conn.execute(
            f"SELECT {', '.join(spec.names)} FROM {table} ORDER BY {', '.join(spec.primary_key)}"
        )
        for values in cursor:
            yield dict(zip(spec.names, values, strict=True))

    def row_chunks(self, table: str, size: int = 1000) -> Iterator[list[tuple[Any, ...]]]:
        return reads.row_chunks(self.conn, table, size)

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

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
        from tracehouse.search import sqlite_query as fts
        from tracehouse.search.query import parse

        filters = filters or SearchFilters()
        readers = self._search_readers()
        if mode == "lexical":
            return fts.search(readers, parse(query), filters)
        from tracehouse.search import semantic, sqlite_semantic

        model = semantic.required(sqlite_vectors.held_model(readers[0]), embedder)
        words = parse(query) if mode == "hybrid" else None
        lexical = None if words is None else lambda deep: fts.search(readers, words, deep)
        return sqlite_semantic.search(readers[0], model, query, filters, lexical)

    def embedding_model(self) -> str | None:
        return sqlite_vectors.held_model(self._search_readers()[0])

    def embedding_status(self) -> Status:
        return sqlite_vectors.status(self.conn)

    def embedding_backlog(self, *, wrote: bool = True) -> int:
        return sqlite_vectors.backlog(self.conn)  # a few reads of marks and rowids: always

    def embed_backlog(
        self, embedder: Embedder, progress: Callable[[int, int], None] | None = None,
        *, again: bool = False,
    ) -> int:  # fmt: skip
        """Embed the rows not embedded yet (all of them `again`), in short transactions."""
        with self.transaction() as conn:
            if again:
                sqlite_vectors.reset(conn)
            sqlite_vectors.prepare(conn, embedder.name, embedder.dims)
        total, done = sqlite_vectors.backlog(self.conn), 0
        while True:
            with self.transaction() as conn:
                step = sqlite_vectors.embed_step(conn, embedder)
            if not step:
                return done
            done += step
            if progress is not None:
                progress(done, total)

    def search_lag(self) -> int:
        return sqlite_index.unindexed(self.conn)

    def _search_readers(self) -> list[sqlite3.Connection]:
        if not self._readers:
            self._readers = reads.search_readers(self.path)
        return self._readers

    def compact(self) -> None:
        """Leave no copy of rewritten text behind (`secrets redact`): the search index's old
        segments merged away, the vectors of texts no row holds dropped, the WAL folded in,
        the file rewritten without its free pages."""
        from tracehouse.search.sqlite_index import INDEXES

        with self.transaction() as conn:
            sqlite_vectors.prune(conn)

        for index in INDEXES:
            self.conn.execute(f"INSERT INTO {index.name}({index.name}) VALUES ('optimize')")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.execute("VACUUM")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self._let_go_builders()  # a run that failed before it finished: the next one indexes
        self._end_first_load()
        if self._checkpointer is not None:
            self._checkpointer.close()
        for reader in self._readers:
            reader.close()
        self.conn.close()
