"""`store copy`: move a ledger between stores (SQLite ↔ PostgreSQL) through `import_batch`.

Everything goes through the import contract, so a copy obeys the rules every import does: rows
are upserted by id, unchanged rows are never rewritten, nothing in the target is deleted. That
makes a copy idempotent, and resumable: an interrupted copy has committed whole batches, and
the next one compares session fingerprints first and reads only the sessions still missing.

Order matters for a crash: sessions first, then watermarks (a cursor never claims rows the
target does not have yet), then the run log. Provenance travels with each session (mode
`migration`): when it was first imported, by which host, whether its source is gone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracehouse.model.columns import Table
from tracehouse.model.contract import (
    ImportBatch,
    ImportItem,
    ItemResult,
    new_run_id,
)
from tracehouse.model.tables import CONTENT_TABLES, SESSIONS, WATERMARKS
from tracehouse.store.items import MIGRATION
from tracehouse.store.protocol import BOOKKEEPING, SESSION_BOOKS, RunTotals, SessionStore

BATCH_SESSIONS = 100


@dataclass
class CopyReport:
    run_id: str
    sessions: int = 0  # in the source
    copied: int = 0  # written to the target (new or changed)
    unchanged: int = 0  # already in the target, same fingerprint: not read again
    rows_written: int = 0
    watermarks: int = 0  # added: the target had no cursor for the unit
    log_rows: int = 0
    failed: list[ItemResult] = field(default_factory=list)
    source_counts: Mapping[str, int] = field(default_factory=dict)
    target_counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed


def copy_store(
    source: SessionStore,
    target: SessionStore,
    *,
    batch_sessions: int = BATCH_SESSIONS,
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy every session, watermark and run-log row of `source` that `target` lacks."""
    report = CopyReport(new_run_id())
    target.start_run(report.run_id, MIGRATION)
    held = {
        row["session_id"]: (row["fingerprint"], row["source_missing_at"])
        for row in target.query("SELECT session_id, fingerprint, source_missing_at FROM sessions")
    }
    sessions = source.query(f"SELECT {', '.join(SESSIONS.names)} FROM sessions")
    report.sessions = len(sessions)
    pending = [
        s
        for s in sessions
        if held.get(s["session_id"]) != (s["fingerprint"], s["source_missing_at"])
    ]
    report.unchanged = report.sessions - len(pending)
    pending.sort(key=lambda s: s["session_id"])
    for start in range(0, len(pending), batch_sessions):
        chunk = pending[start : start + batch_sessions]
        response = target.import_batch(copy_batch(source, chunk, report.run_id))
        report.copied += response.count("imported") + response.count("upserted")
        report.rows_written += response.rows_written
        report.failed.extend(r for r in response.results if r.status == "failed")
        if progress:
            progress(start + len(chunk), len(pending))

    # A cursor the target already holds stays: it describes rows the target has. One it lacks
    # comes with its run and time, so a copied ledger reads as the original did.
    report.watermarks = target.add_absent(WATERMARKS.name, source.rows(WATERMARKS.name))
    for table in (*BOOKKEEPING[1:], *SESSION_BOOKS):
        report.log_rows += target.add_absent(table, source.rows(table))
    target.finish_run(report.run_id, RunTotals(error=_failures(report.failed)))
    report.source_counts = source.info().row_counts
    report.target_counts = target.info().row_counts
    return report


def copy_batch(source: SessionStore, sessions: list[dict[str, Any]], run_id: str) -> ImportBatch:
    """Sessions as `source` holds them, with their rows, as one migration batch."""
    ids = [s["session_id"] for s in sessions]
    rows = {t.name: _rows(source, t, ids) for t in CONTENT_TABLES.values()}
    items = tuple(
        ImportItem(
            source_provider=s["source_provider"],
            source_session_id=s["source_session_id"],
            fingerprint=s["fingerprint"],
            imported_at_ms=0,
            session=s,
        )
        for s in sessions
    )
    return ImportBatch(
        items, rows=rows, source="tracehouse store copy", run_id=run_id, mode=MIGRATION
    )


def _rows(source: SessionStore, table: Table, session_ids: list[str]) -> list[tuple[Any, ...]]:
    marks = ", ".join("?" * len(session_ids))
    found = source.query(
        f"SELECT {', '.join(table.names)} FROM {table.name} WHERE session_id IN ({marks})",
        session_ids,
    )
    return [tuple(row[n] for n in table.names) for row in found]


def _failures(failed: list[ItemResult]) -> str | None:
    if not failed:
        return None
    first = failed[0]
    return f"{len(failed)} sessions not copied; first: {first.source_session_id}: {first.reason}"
