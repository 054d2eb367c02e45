"""The one door into a session store (DESIGN §4), shared by SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

# Types alone: a command that only reads (the status line, every report) never loads the
# import contract's classes.
if TYPE_CHECKING:
    from tracehouse.model.contract import ImportBatch, ImportResponse
    from tracehouse.retrying import RetryLog
    from tracehouse.search.embedders import Embedder
    from tracehouse.search.hits import Hit, SearchFilters
    from tracehouse.search.semantic import Status

T = TypeVar("T")


@dataclass(frozen=True)
class StoreInfo:
    location: str  # a path, or a DSN with the password masked
    backend: str
    schema_version: int
    row_counts: Mapping[str, int]


@dataclass(frozen=True)
class RunTotals:
    """What the pipeline adds to a run's row when it finishes (the store adds item counts)."""

    bytes_read: int = 0
    rejects: int = 0
    dedupe_hits: int = 0
    # What a worker process met; the store adds the retries it made itself (`retry_log`).
    retry_reasons: Mapping[str, int] = field(default_factory=dict)
    tail_lag_ms: int | None = None  # the largest, live runs only
    tail_lag_p50_ms: int | None = None
    error: str | None = None
    redactions: Mapping[str, int] = field(default_factory=dict)  # kind → secrets replaced


# What a store records beside the ledger's content: cursors and the run log.
BOOKKEEPING = ("watermarks", "import_runs", "import_requests", "rejects")
# What the ledger keeps about its sessions beyond their rows: their history of changes, the
# labels they were shown under, the sessions deleted from it (a copy carries them all).
SESSION_BOOKS = ("session_history", "session_aliases", "session_tombstones")


class Tx(Protocol):
    """A store's open write transaction, with sqlite3-style `?` placeholders: what the
    store-neutral writes (`store/tombstones.py`, `store/labels.py`) go through."""

    def execute(self, sql: str, params: Sequence[Any]) -> int: ...

    def query(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]: ...

    def rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows as tuples in the SELECT's column order: for reads of a whole session."""
        ...

    def delete_rows(self, table: str, where: str, params: Sequence[Any]) -> int:
        """DELETE FROM table WHERE where, keeping any index of the table true."""
        ...


class SessionStore(Protocol):
    location: str  # for people: a path, or a DSN with the password masked
    retry_log: RetryLog  # the retries since the last finished run, by reason
    schema_version: int  # the migrations applied
    backend: str  # "sqlite" or "postgresql"
    # For `open_store` in another process (sync's workers): may hold a password, never printed.
    address: str
    # Whether writers in several processes at once go faster (a server) or queue on one lock.
    concurrent_writes: bool

    def import_batch(self, batch: ImportBatch) -> ImportResponse:
        """Apply a batch: each item atomic and alone, watermarks with their rows (DESIGN §4)."""
        ...

    def import_group(
        self, *, builders: bool = False
    ) -> AbstractContextManager[Callable[[ImportBatch], ImportResponse]]:
        """An `import_batch` for several batches in a row that commit together at the end where
        the backend gains by it (SQLite rewrites every index page a commit touched); elsewhere
        each batch is its own transaction. Either way no batch commits without its watermarks.
        `builders`: cores are to spare for building the search index beside the writer, where
        the backend can (SQLite's first load); the index is whole when the run finishes."""
        ...

    def watermarks(
        self, provider: str, unit_keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        """unit_key → cursor for every unit of a provider, or for these units (no states)."""
        ...

    def watermark_states(self, provider: str, unit_keys: Iterable[str]) -> dict[str, Any]:
        """unit_key → the parser's resume state, for the units about to be parsed."""
        ...

    def mark_missing(
        self,
        provider: str,
        unit_keys: Iterable[str],
        at: str,
        run_id: str,
        machine: str | None = None,
    ) -> int:
        """Flag the sessions read from vanished units; deletes nothing. Returns sessions flagged.
        With `machine` (a gateway), the units are that pushing machine's: its sessions only,
        its cursors (`pushed_key`)."""
        ...

    def unresolved_rejects(self, provider: str, location: str) -> list[str]:
        """The units with an unresolved reject at `location` (`directory`: a root unlisted)."""
        ...

    def write(self, work: Callable[[Tx], T]) -> T:
        """`work` in one write transaction, retried from the start where the backend retries
        (the store-neutral writes: the gateway's tokens)."""
        ...

    def add_absent(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Add the rows of a BOOKKEEPING table whose key this store does not hold, as they are;
        rows it holds are left alone. Returns the rows added (`store copy`)."""
        ...

    def save_export_mark(self, target: str, format: str, exported_at: str, sessions: int) -> None:
        """Record that an export of `format` to the directory `target` started at `exported_at`
        (`export --since-last` writes only what changed after it)."""
        ...

    def delete_sessions(self, session_ids: Sequence[str], deleted_at: str) -> dict[str, int]:
        """Delete the sessions with every row of theirs, cut the links to them and leave a
        tombstone, in one transaction (`store/tombstones.py`); the rows deleted per table."""
        ...

    def restore_sessions(self, session_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Remove their tombstones so the next sync brings them back; the tombstones removed."""
        ...

    def pending_migrations(self) -> list[str]:
        """The schema migrations this ledger lacks, by name, in the order they would run."""
        ...

    def migrate(self) -> list[str]:
        """Apply the pending migrations; returns their names."""
        ...

    def start_run(self, run_id: str, mode: str) -> None: ...

    def finish_run(self, run_id: str, totals: RunTotals) -> None:
        """Close a run's row: its totals, with the retries noted in `retry_log` since the last
        run (taken from it) added to those in `totals`."""
        ...

    def info(self) -> StoreInfo: ...

    def rows(self, table: str) -> Iterator[dict[str, Any]]:
        """Every row of a table in primary-key order (tests, copies, verification)."""
        ...

    def row_chunks(self, table: str, size: int = 1000) -> Iterator[list[tuple[Any, ...]]]:
        """Every row of a table in the order the store keeps them (cheapest to read), as tuples
        in the table's column order, `size` at a time, streamed (exports of a whole ledger).
        Text may come as its UTF-8 bytes, as the store keeps it."""
        ...

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        """A read-only query with parameters, for the read side (sessions list/show)."""
        ...

    def search(
        self,
        query: str,
        filters: SearchFilters | None = None,
        *,
        mode: str = "lexical",
        embedder: Embedder | None = None,
    ) -> list[Hit]:
        """The best hits, ranked, each with a snippet: by the query's words (`lexical`), by
        its meaning with `embedder` (`semantic`), or both fused (`hybrid`). Search by meaning
        raises `SemanticUnavailable` where the ledger holds no vectors of `embedder`'s."""
        ...

    def embedding_model(self) -> str | None:
        """The model whose vectors the ledger holds; None when it holds none."""
        ...

    def embedding_status(self) -> Status:
        """The model of the ledger's vectors, how many there are, and the rows waiting."""
        ...

    def embedding_backlog(self, *, wrote: bool = True) -> int:
        """Rows not embedded yet; `wrote` False (the caller wrote nothing) lets a store whose
        count is a scan answer 0 when its last embedding finished."""
        ...

    def embed_backlog(
        self,
        embedder: Embedder,
        progress: Callable[[int, int], None] | None = None,
        *,
        again: bool = False,
    ) -> int:
        """Embed the rows not embedded yet (all of them, `again`), in short transactions
        after the rows are committed; vectors of another model go first. Returns the rows."""
        ...

    def search_lag(self) -> int:
        """Rows the full-text index does not hold yet, which a search cannot find: on SQLite a
        first load's until its run finishes, or those of a run killed before it did (the next
        sync indexes them); 0 where rows and their index are written together."""
        ...

    def compact(self) -> None:
        """Rewrite the store's files so that no copy of changed or deleted text remains."""
        ...

    def close(self) -> None: ...
