"""The import contract (DESIGN §4): what goes into `SessionStore.import_batch`, what comes out.

In process a batch carries polars frames: one frame per content table holding the rows of every
item in the batch, told apart by `session_id`. The JSON form (`model/codec.py`) is for files and
other producers.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from tracehouse.model.fingerprint import combine
from tracehouse.model.tables import CONTENT_TABLES, TABLES_BY_NAME

if TYPE_CHECKING:
    import polars as pl

Status = Literal["imported", "upserted", "skipped", "failed"]
MODES = ("backfill", "tail", "live", "import", "migration")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_run_id() -> str:
    """Run ids name a run in the log; unlike ledger ids they are meant to be unique, not derived."""
    return f"run_{datetime.now(UTC):%Y%m%dT%H%M%S}_{secrets.token_hex(4)}"


@dataclass(frozen=True)
class WatermarkUpdate:
    """A unit's new cursor, committed in the same transaction as the rows read from it."""

    source_provider: str
    unit_key: str
    cursor: Mapping[str, Any]
    # The parser's resume state, or its canonical JSON when the parser encoded it already: a
    # Claude unit's state holds a link per record, and as bytes it crosses from a parser process
    # to the writer without millions of small objects to unpickle and encode again.
    state: Mapping[str, Any] | bytes | None = None


def pushed_key(machine: str, unit_key: str) -> str:
    """A unit of a pushing machine, as a gateway's ledger keys its cursor and rejects: two
    laptops may hold the same path, and each keeps its own place in it (`host:path`, as scp)."""
    return f"{machine}:{unit_key}"


@dataclass(frozen=True)
class Reject:
    """A record that could not be imported, with where it is and why."""

    source_provider: str
    unit_key: str
    location: str
    reason: str
    raw_excerpt: str | None = None


@dataclass(frozen=True)
class Clear:
    """Where a parse read its unit again: the unit's unresolved rejects it covers and did not
    raise again are resolved. It covers `file`, `database` and `directory` rejects of the unit,
    `line N` rejects from `from_line` on (a whole re-read: from 1), and locations starting with
    one of `keys` (a Cursor composer's keys)."""

    source_provider: str
    unit_key: str
    from_line: int | None = None
    keys: tuple[str, ...] = ()

    def covers(self, location: str) -> bool:
        if location in ("file", "database", "directory"):
            return True
        if self.from_line is not None and location.startswith("line "):
            number = location[5:].split(" ", 1)[0]
            return number.isdigit() and int(number) >= self.from_line
        return location.startswith(self.keys) if self.keys else False


@dataclass(frozen=True)
class ImportItem:
    """One session's share of a batch: its session row; its other rows are in the batch frames."""

    source_provider: str
    source_session_id: str
    fingerprint: str
    imported_at_ms: int
    session: Mapping[str, Any]
    watermarks: tuple[WatermarkUpdate, ...] = ()
    # What the fingerprint covers beside the session row (where the source's content ends, or
    # its digest): kept so that redaction can fingerprint a changed row as its parser would.
    # Never stored nor sent.
    salt: tuple[str, ...] = ()

    @property
    def session_id(self) -> str:
        return str(self.session["session_id"])


@dataclass(frozen=True)
class ItemResult:
    source_provider: str
    source_session_id: str
    session_label: str | None
    status: Status
    reason: str | None = None
    rows_written: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "sourceProvider": self.source_provider,
            "sourceSessionId": self.source_session_id,
            "sessionLabel": self.session_label,
            "status": self.status,
            "reason": self.reason,
            "rowsWritten": self.rows_written,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemResult:
        return cls(
            source_provider=data["sourceProvider"],
            source_session_id=data["sourceSessionId"],
            session_label=data.get("sessionLabel"),
            status=data["status"],
            reason=data.get("reason"),
            rows_written=data.get("rowsWritten", 0),
        )


@dataclass(frozen=True)
class ImportBatch:
    items: tuple[ImportItem, ...]
    # table name → rows of all items, as frames; tables without rows may be absent.
    frames: Mapping[str, pl.DataFrame] = field(default_factory=dict)
    # ... or as tuples in the table's column order, the schema's explicit order: what the
    # pipeline hands over. `frame()` builds the polars frame on demand; the SQLite store writes
    # the tuples as they are, so a sync does not load polars only to unpack it again. A batch a
    # parser process sends SQLite's writer holds its large texts as UTF-8 bytes instead
    # (`store.sqlite.binds.as_utf8`): for that writer alone.
    rows: Mapping[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    source: str = "tracehouse"
    run_id: str = field(default_factory=new_run_id)
    mode: str = "backfill"
    idempotency_key: str | None = None
    # Items refused while decoding (JSON form): reported `failed` beside the others' results,
    # at their places in the request (`invalid_at`).
    invalid: tuple[ItemResult, ...] = ()
    invalid_at: tuple[int, ...] = ()
    rejects: tuple[Reject, ...] = ()
    # Cursors of units that yielded no item this time (empty, metadata-only or all-rejected).
    watermarks: tuple[WatermarkUpdate, ...] = ()
    request_hash: str | None = None
    # Units read again: their old rejects that were not raised again are resolved.
    clears: tuple[Clear, ...] = ()
    # What the receiving end redacted of this batch (a gateway's, of a push): added to the run.
    redactions: Mapping[str, int] = field(default_factory=dict)
    # The sessions whose messages or tool calls hold text of a script written without spaces,
    # where the producer worked it out (parser processes do for SQLite's writer in another
    # process; see `search.sqlite_index.unspaced_sessions`); None: the writer works it out.
    unspaced: frozenset[str] | None = None

    def frame(self, table: str) -> pl.DataFrame:
        frame = self.frames.get(table)
        if frame is not None:
            return frame
        if table in self.rows:
            from tracehouse.model.rows import tuples_to_frame

            return tuples_to_frame(TABLES_BY_NAME[table], self.rows[table])
        return _empty(table)

    def tuples(self, table: str) -> list[tuple[Any, ...]]:
        """The table's rows as tuples in column order, from whichever form the batch carries."""
        if table in self.rows:
            return list(self.rows[table])
        frame = self.frames.get(table)
        if frame is None or frame.is_empty():
            return []
        names = list(TABLES_BY_NAME[table].names)
        return frame.select(names).rows() if frame.columns != names else frame.rows()

    def in_request_order(self, results: list[ItemResult]) -> tuple[ItemResult, ...]:
        """The items' results (in `items` order) with the refused ones put back where they
        stood in the request: results come back in request order."""
        merged = list(results)
        for at, result in sorted(zip(self.invalid_at, self.invalid, strict=True)):
            merged.insert(at, result)
        return tuple(merged)

    def content_hash(self) -> str:
        """What an idempotency key is bound to: the request as decoded, or the rows it carries."""
        if self.request_hash is not None:
            return self.request_hash
        parts = [item.fingerprint for item in self.items]
        for name in sorted({*self.frames, *self.rows}):
            names = TABLES_BY_NAME[name].names
            if "fingerprint" in names:
                index = names.index("fingerprint")
                parts.extend(sorted(row[index] for row in self.tuples(name)))
        return combine(parts)


def _empty(table: str) -> pl.DataFrame:
    for t in CONTENT_TABLES.values():
        if t.name == table:
            return t.empty()
    raise KeyError(table)


@dataclass(frozen=True)
class ImportResponse:
    run_id: str
    results: tuple[ItemResult, ...]
    # True when this is the stored response to a request whose idempotency key was seen before.
    replayed: bool = False

    def count(self, status: Status) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def ok(self) -> bool:
        return self.count("failed") == 0

    @property
    def rows_written(self) -> int:
        return sum(r.rows_written for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "runId": self.run_id,
            "imported": self.count("imported"),
            "upserted": self.count("upserted"),
            "skipped": self.count("skipped"),
            "failed": self.count("failed"),
            "results": [r.to_json() for r in self.results],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, replayed: bool = False) -> ImportResponse:
        return cls(
            run_id=data["runId"],
            results=tuple(ItemResult.from_json(r) for r in data.get("results", [])),
            replayed=replayed,
        )
