"""A sync run's options and its report: what every stage of the pipeline is given and fills in,
in a module of their own so the stages import it and not each other."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracehouse.model.contract import ImportBatch, ImportResponse, Reject
from tracehouse.parsers.base import Unit
from tracehouse.store.protocol import SessionStore

if TYPE_CHECKING:
    from tracehouse.redaction.redactor import Redactor
    from tracehouse.search.embedders import Lazy

POOL_MIN_BYTES = 16 * 1024 * 1024  # below this, worker start-up costs more than it saves
# A run's time by phase, each summed over the processes that spent it (so with workers they add
# up to more than the wall time): finding and planning the units; launching the worker processes
# (the parent's time), and each worker's time from its launch to its first unit; parsing;
# a worker blocked handing a batch over (the writer is behind); the writer waiting for a batch
# (the parsers are behind); writing rows; bringing the search index up to date; committing;
# beside the writer, copying the SQLite WAL into the ledger (`checkpointer`) and building a first
# load's search indexes (`sqlite_builders`); the writer adopting those indexes at the end; and
# embedding the new rows for search by meaning, once they are committed.
PHASES = (
    "plan",
    "launch",
    "start",
    "parse",
    "send",
    "wait",
    "write",
    "index",
    "commit",
    "checkpoint",
    "build",
    "adopt",
    "embed",
)


@dataclass(frozen=True)
class SyncOptions:
    sources: Mapping[str, list[Path]]  # provider → roots to scan
    mode: str = "backfill"
    full: bool = False
    dry_run: bool = False
    workers: int = 1
    batch_bytes: int = 8 * 1024 * 1024
    batch_sessions: int = 500
    chunk_bytes: int = 8 * 1024 * 1024
    max_field: int = 1024 * 1024
    max_line: int = 64 * 1024 * 1024
    quiet_seconds: float = 2.0
    pool_min_bytes: int = POOL_MIN_BYTES  # less to parse than this: no worker processes
    # SQLite's first load builds its large search indexes beside the writer from this many
    # cores on (`search/sqlite_builders.py`); 0: never.
    builders_min_cores: int = 4
    scratch: str | None = None  # ParseOptions.scratch: a directory the caller owns and removes
    # Replaces secrets in what each parse produced before it is stored; None: stored verbatim.
    redactor: Redactor | None = None
    # Where discovery keeps the listings of the folders under project roots between runs
    # (`kit.folders`); None: each run lists them.
    folders_file: Path | None = None
    # Called after each committed batch with its number (inline runs only: it does not travel
    # to worker processes). The crash-safety tests stop here.
    on_batch: Callable[[int], None] | None = None
    # Called with each batch written and the store's answer (inline runs only): `sync live
    # --events` tells the turns that came in.
    on_commit: Callable[[ImportBatch, ImportResponse], None] | None = None
    # Asked after each committed batch: True stops the run there (SIGTERM in live mode).
    stop: Callable[[], bool] | None = None
    # The model that embeds the run's new rows once they are committed; None: none is made.
    embeddings: Lazy | None = None


@dataclass(frozen=True)
class Targets:
    """What a live flush syncs instead of discovering everything: the units whose files changed
    and the paths that vanished, per provider."""

    units: Mapping[str, list[Unit]]
    gone: Mapping[str, list[str]] = field(default_factory=dict)


@dataclass
class SyncReport:
    run_id: str
    units: int = 0
    unchanged: int = 0
    parsed: int = 0
    waiting: int = 0
    missing: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    rows_written: int = 0
    bytes_read: int = 0
    rejects: list[Reject] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    accounting: Counter[str] = field(default_factory=Counter)
    batches: int = 0
    seconds: float = 0.0
    dry_run: bool = False
    # Commit time minus the last write of each committed unit, in ms (`tail_lag`).
    lags_ms: list[int] = field(default_factory=list)
    # Retries the worker processes' stores made, by reason (the main store keeps its own).
    retry_reasons: Counter[str] = field(default_factory=Counter)
    redactions: Counter[str] = field(default_factory=Counter)  # kind → secrets replaced
    # Seconds by phase, summed over the processes (see PHASES): where a run's time went.
    phases: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    embedded: int = 0  # rows embedded for search by meaning after the import
    # Why rows were left unembedded (the model would not load, the endpoint failed): the
    # import stands, and the next sync embeds them.
    embed_error: str | None = None

    def tail_lag(self) -> tuple[int | None, int | None]:
        """The median and the largest lag from a unit's last write to its commit."""
        if not self.lags_ms:
            return None, None
        ordered = sorted(self.lags_ms)
        return ordered[(len(ordered) - 1) // 2], ordered[-1]

    @property
    def ok(self) -> bool:
        return not self.rejects and not self.failures

    def merge(self, other: SyncReport) -> None:
        """Add a worker's share of the run."""
        self.parsed += other.parsed
        self.waiting += other.waiting
        self.statuses.update(other.statuses)
        self.rows_written += other.rows_written
        self.bytes_read += other.bytes_read
        self.rejects.extend(other.rejects)
        self.failures.extend(other.failures)
        self.accounting.update(other.accounting)
        self.batches += other.batches
        self.lags_ms.extend(other.lags_ms)
        self.retry_reasons.update(other.retry_reasons)
        self.redactions.update(other.redactions)
        for phase, spent in other.phases.items():
            self.phases[phase] += spent

    def book_store_timings(self, store: SessionStore) -> None:
        """Move what a store measured of its own work (SQLite: its search-index flushes and
        commits, `timings`) out of the "write" phase that enclosed it, into phases of their own;
        checkpoints and index builders ran beside the writer."""
        timings = getattr(store, "timings", None)
        if not timings:
            return
        for phase in ("index", "commit", "checkpoint", "build", "adopt"):
            spent = timings.pop(phase, 0.0)
            if spent:
                self.phases[phase] += spent
                if phase in ("index", "commit"):
                    self.phases["write"] -= spent

    def to_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "dryRun": self.dry_run,
            "units": self.units,
            "unchanged": self.unchanged,
            "parsed": self.parsed,
            "waiting": self.waiting,
            "missing": self.missing,
            "sessions": {
                s: self.statuses.get(s, 0) for s in ("imported", "upserted", "skipped", "failed")
            },
            "rowsWritten": self.rows_written,
            "bytesRead": self.bytes_read,
            "rejects": [
                {
                    "provider": r.source_provider,
                    "unit": r.unit_key,
                    "location": r.location,
                    "reason": r.reason,
                }
                for r in self.rejects
            ],
            "failures": self.failures,
            "batches": self.batches,
            "redacted": dict(sorted(self.redactions.items())),
            "embedded": self.embedded,
            "embedError": self.embed_error,
            "seconds": round(self.seconds, 3),
            "phases": {k: round(self.phases[k], 3) for k in PHASES if k in self.phases},
        }
