"""Parse → batch → commit: the one ingest loop, split where a process boundary may fall.

`parse_batches` turns tasks into batches ready to commit and needs no store, so it runs inline or
in a parser process. `commit` writes one batch (rows and watermarks in one transaction, or in
the transaction of the group it belongs to) and books the result in the run report.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracehouse.model.contract import ImportBatch, ImportResponse, Reject
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult, dangling
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline.batcher import PendingBatch
from tracehouse.pipeline.options import SyncOptions, SyncReport
from tracehouse.redaction.rows import redact_result
from tracehouse.state.watermark import Action
from tracehouse.store.protocol import SessionStore

if TYPE_CHECKING:
    from tracehouse.redaction.redactor import Redactor

# A unit to parse, its cursor (None: from the start) and the bytes it may read.
Task = tuple[Unit, Mapping[str, Any] | None, int]


@dataclass
class Ready:
    """A batch parsed and ready to commit, with what the run report needs once it is."""

    batch: ImportBatch | None  # None on a dry run: nothing to write
    rejects: list[Reject]
    sessions: int
    bytes_read: int
    written: list[int] = field(default_factory=list)  # last write (ns) of each finished unit


def parse_batches(
    options: SyncOptions,
    tasks: Iterable[Task],
    run_id: str,
    report: SyncReport,  # the parsing counts are booked here
    advance: Callable[[int], None],
) -> Iterator[Ready]:
    """Parse units in order and yield a batch each time one is full. A unit's chunks follow one
    another, so they commit in file order wherever the batches are written."""
    parse_options = ParseOptions(
        full=options.full,
        budget_bytes=options.chunk_bytes,
        max_field=options.max_field,
        max_line=options.max_line,
        quiet_seconds=options.quiet_seconds,
        now=time.time(),
        scratch=options.scratch,
    )
    pending = PendingBatch()
    written: list[int] = []
    for unit, cursor, _size in tasks:
        if options.stop is not None and options.stop():
            break  # what was not committed keeps its old watermark: the next run reads it
        report.parsed += 1
        while True:
            began = time.perf_counter()
            result = _parse(unit, cursor, parse_options, options.redactor)
            report.phases["parse"] += time.perf_counter() - began
            if result.done:
                written.append(result.mtime_ns)
            report.bytes_read += result.bytes_read
            report.accounting.update(result.accounting)
            report.redactions.update(result.redacted)
            advance(result.bytes_read)
            if result.action is Action.WAIT:
                report.waiting += 1
            pending.add(result)
            if pending.bytes >= options.batch_bytes or len(pending.items) >= options.batch_sessions:
                yield _ready(pending, written, run_id, options, report)
                pending, written = PendingBatch(), []
            if result.done:
                break
            cursor = result.cursor
    if not pending.empty:
        yield _ready(pending, written, run_id, options, report)


def _ready(
    pending: PendingBatch, written: list[int], run_id: str, options: SyncOptions, report: SyncReport
) -> Ready:
    began = time.perf_counter()
    batch = None if options.dry_run else pending.build(run_id, options.mode)
    report.phases["parse"] += time.perf_counter() - began
    return Ready(batch, pending.rejects, len(pending.items), pending.bytes, written)


def _parse(
    unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions, redactor: Redactor | None
) -> UnitResult:
    unreadable = unit.info.get("unreadable")
    if unreadable:
        reject = Reject(unit.provider, unit.key, "directory", f"cannot list: {unreadable}")
        return UnitResult(unit, Action.SKIP, rejects=[reject])
    problem = dangling(unit.key)
    if problem:
        reject = Reject(unit.provider, unit.key, "file", f"cannot read: {problem}")
        return UnitResult(unit, Action.SKIP, rejects=[reject])
    try:
        result = PARSERS[unit.provider].parse(unit, cursor, options)
        if redactor is not None:  # secrets out before anything is fingerprinted or stored
            result = redact_result(redactor, result)
    except Exception as exc:
        # Every parser turns what it reads into rejects itself; reaching here is a tracehouse
        # bug on an input nobody foresaw. The unit is a reject and keeps its old cursor, so the
        # next run (a fixed tracehouse) reads it again; the run goes on with the other units.
        # Nothing of a unit whose redaction failed is stored: it would be stored verbatim.
        reason = f"tracehouse could not parse it ({type(exc).__name__}: {exc}); please report"
        reject = Reject(unit.provider, unit.key, "file", reason[:1000])
        return UnitResult(unit, Action.SKIP, rejects=[reject])
    return result


def commit(
    write: Callable[[ImportBatch], ImportResponse], ready: Ready, report: SyncReport
) -> ImportResponse | None:
    """Write one ready batch with `write` (a store's import, alone or in a group) and book it."""
    report.rejects.extend(ready.rejects)
    if ready.batch is None:
        report.statuses["would import"] += ready.sessions
        return None
    began = time.perf_counter()
    response = write(ready.batch)
    report.phases["write"] += time.perf_counter() - began
    report.batches += 1
    report.rows_written += response.rows_written
    for result in response.results:
        report.statuses[result.status] += 1
        if result.status == "failed":
            report.failures.append(f"{result.source_session_id}: {result.reason}")
    return response


def committed(
    written: list[int], report: SyncReport, on_batch: Callable[[int], None] | None
) -> None:
    """Once a transaction is committed: the lag of each unit it finished from its last write
    (`written`, ns), and the hook."""
    now = time.time_ns()
    report.lags_ms.extend(int((now - mtime) / 1e6) for mtime in written if mtime)
    if on_batch is not None:
        on_batch(report.batches)


def run_tasks(
    store: SessionStore,
    options: SyncOptions,
    tasks: Iterable[Task],
    report: SyncReport,
    advance: Callable[[int], None],
) -> None:
    """The inline ingest: each batch committed as soon as it is parsed."""
    for ready in parse_batches(options, tasks, report.run_id, report, advance):
        response = commit(store.import_batch, ready, report)
        if ready.batch is not None:
            committed(ready.written, report, options.on_batch)
            if response is not None and options.on_commit is not None:
                options.on_commit(ready.batch, response)
