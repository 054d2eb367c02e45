"""The one sync path (DESIGN §2, §5): discover → plan → parse → batch → import.

Backfill runs it over every unit; live mode (later) runs it over the units that changed. A
no-change run costs one `stat` per file: units whose size and mtime match their watermark are
never opened. With enough to parse and more than one process allowed, the units are shared out
to parser processes and this process writes what they send (`pipeline.workers`); either way
every batch commits its rows and watermarks in one transaction.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracehouse.model.contract import (
    Clear,
    ImportBatch,
    new_run_id,
    now_iso,
)
from tracehouse.parsers.base import Unit, dangling
from tracehouse.parsers.kit.folders import Folders
from tracehouse.parsers.kit.layout import discover_together
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline.ingest import Task, run_tasks
from tracehouse.pipeline.options import SyncOptions, SyncReport, Targets
from tracehouse.pipeline.progress import NullProgress, ProgressSink
from tracehouse.state import scratch as scratch_space
from tracehouse.state.watermark import Action, beside_changed, quick_plan
from tracehouse.store.protocol import RunTotals, SessionStore

if TYPE_CHECKING:
    from tracehouse.search.embedders import Lazy

# Parsers beside SQLite's one writer. On a 16-core machine (880 MB bench corpus) 3 parsers left
# the writer no gap (they waited 20 s between them to hand a batch over) and 15 were 8% slower
# than 3, at 1.7 GB instead of 0.65 GB: each parser holds ~80 MB, half of it the compiled
# secret-scanning rules. One more than 3 for a writer that is faster than that one.
SQLITE_PARSERS = 4


def sync(
    store: SessionStore,
    options: SyncOptions,
    progress: ProgressSink | None = None,
    targets: Targets | None = None,
) -> SyncReport:
    started = time.monotonic()
    progress = progress or NullProgress()
    report = SyncReport(run_id=new_run_id(), dry_run=options.dry_run)
    scratch_space.remove_leftovers()  # copies left by runs that were killed
    if not options.dry_run:
        store.start_run(report.run_id, options.mode)
    tasks: list[Task] = []
    total = 0
    # The secret-scanning rules load beside the rest of the plan once a unit has work (a run
    # with nothing new never loads them), where this process scans: inline, or as SQLite's
    # writer, which parses too (a server's parsers write for themselves).
    redactor = options.redactor
    warm = None
    if redactor is not None and (options.workers == 1 or not store.concurrent_writes):
        warm = redactor.detector.load_in_background
    folders = Folders.load(options.folders_file) if options.folders_file else Folders()
    in_projects = _in_projects(options.sources, folders) if targets is None else {}
    for provider, roots in options.sources.items():
        parser = PARSERS[provider]
        if targets is None:
            units = in_projects[provider] if provider in in_projects else parser.discover(roots)
            cursors = store.watermarks(provider)
            gone = _missing(roots, units, cursors)
        else:
            units = targets.units.get(provider, [])
            gone = targets.gone.get(provider, [])
            cursors = store.watermarks(provider, [u.key for u in units] + gone)
            gone = [k for k in gone if k in cursors and not cursors[k].get("missing")]
        if targets is None and not options.dry_run:
            _resolve_listed_directories(store, provider, roots, units, report.run_id, options.mode)
        gone = [k for k in gone if not os.path.exists(k)]
        if gone and not options.dry_run:
            store.mark_missing(provider, gone, now_iso(), report.run_id)
        report.units += len(units)
        report.missing += len(gone)
        planned = []
        for unit, cursor, size in plan(units, cursors, options.full):
            if size is None:
                report.unchanged += 1
                continue
            planned.append((unit, cursor, size))
            total += size
            if warm is not None:
                warm()
                warm = None
        states = store.watermark_states(provider, [u.key for u, c, _ in planned if c])
        for unit, cursor, size in planned:
            state = states.get(unit.key)
            tasks.append((unit, {**cursor, "state": state} if cursor and state else cursor, size))
    if options.folders_file and targets is None:
        folders.save(options.folders_file)
    report.phases["plan"] += time.monotonic() - started
    progress.start(total, len(tasks))
    try:
        _run(store, options, tasks, total, report, progress)
    finally:
        progress.finish()
        if not options.dry_run:
            # A backfill's "lag" is the age of old files, not a delay worth reporting.
            p50, most = report.tail_lag() if options.mode == "live" else (None, None)
            store.finish_run(  # a first load's indexes built beside the writer are adopted here
                report.run_id,
                RunTotals(
                    bytes_read=report.bytes_read,
                    retry_reasons=report.retry_reasons,
                    rejects=len(report.rejects),
                    tail_lag_ms=most,
                    tail_lag_p50_ms=p50,
                    redactions=dict(report.redactions),
                ),
            )
        report.book_store_timings(store)
    if options.embeddings is not None and not options.dry_run:
        _embed(store, options.embeddings, report)
    report.seconds = time.monotonic() - started
    return report


def _embed(store: SessionStore, embeddings: Lazy, report: SyncReport) -> None:
    """Embed what the ledger has not embedded yet (this run's rows, and any a run stopped
    before), after the import committed: a model that fails leaves the rows to the next sync."""
    from tracehouse.search.embedders import EmbeddingError

    began = time.monotonic()
    try:
        if embeddings.enabled and store.embedding_backlog(wrote=report.rows_written > 0):
            report.embedded = store.embed_backlog(embeddings)
    except EmbeddingError as error:
        report.embed_error = str(error)
    report.phases["embed"] += time.monotonic() - began


def _in_projects(sources: Mapping[str, list[Path]], folders: Folders) -> dict[str, list[Unit]]:
    """The units of the sources whose logs are kept in projects, found in one walk of the
    project roots for all of them: each folder is looked at once, and once listed, later runs
    see it unchanged with one `stat` (`kit.folders`)."""
    layouts = [(PARSERS[p].LAYOUT, roots) for p, roots in sources.items()  # type: ignore[attr-defined]
               if getattr(PARSERS[p], "PER_PROJECT", False)]  # fmt: skip
    return discover_together(layouts, folders) if layouts else {}


def plan(
    units: list[Unit], cursors: Mapping[str, Mapping[str, Any]], full: bool
) -> Iterator[tuple[Unit, Mapping[str, Any] | None, int | None]]:
    """Each unit with its cursor and the bytes it may read; None bytes: unchanged, skip it."""
    # A source whose unit is more than one file (a database and its WAL) plans for itself.
    own_plans = {p: getattr(PARSERS[p], "plan_unit", None) for p in {u.provider for u in units}}
    for unit in units:
        raw = cursors.get(unit.key)
        own_plan = own_plans[unit.provider]
        if unit.info.get("unreadable"):
            yield unit, None, 0  # its parse is the reject that says so
            continue
        if own_plan is not None:
            planned = own_plan(unit, raw, full)
            yield unit, raw, 0 if planned is None and dangling(unit.key) else planned
            continue
        try:
            st = os.stat(unit.key)
        except FileNotFoundError:
            if dangling(unit.key):  # a dangling link: its parse is the reject that says so
                yield unit, raw, 0
            continue  # vanished since discovery: the next run flags it missing
        except OSError:
            yield unit, raw, 0  # a symlink loop, a file we may not read: its parse says why
            continue
        beside = unit.info.get("beside")
        if beside and beside_changed(beside, raw):
            yield unit, raw, st.st_size  # read whole again (`state.watermark`)
            continue
        if not full and quick_plan(st, raw) is Action.SKIP:
            yield unit, raw, None
            continue
        offset = raw.get("offset", 0) if raw and not full else 0
        yield unit, raw, max(0, st.st_size - offset)


def _resolve_listed_directories(
    store: SessionStore,
    provider: str,
    roots: list[Path],
    units: list[Unit],
    run_id: str,
    mode: str,
) -> None:
    """Resolve the rejects of directories under these roots that could be listed this time."""
    prefixes = tuple(os.path.abspath(r).rstrip(os.sep) + os.sep for r in roots)
    still = {u.key for u in units if u.info.get("unreadable")}
    stale = [
        key
        for key in store.unresolved_rejects(provider, "directory")
        if key.startswith(prefixes) and key not in still
    ]
    if stale:
        clears = tuple(Clear(provider, key) for key in stale)
        store.import_batch(ImportBatch(items=(), run_id=run_id, mode=mode, clears=clears))


def _missing(
    roots: list[Path], units: list[Unit], cursors: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Units with a watermark under a scanned root that were not found: flag, delete nothing."""
    present = {u.key for u in units}
    prefixes = tuple(os.path.abspath(r).rstrip(os.sep) + os.sep for r in roots)
    # What is under a directory that could not be listed is unknown, not gone.
    unlisted = tuple(u.key.rstrip(os.sep) + os.sep for u in units if u.info.get("unreadable"))
    return [
        key
        for key, cursor in cursors.items()
        if key not in present
        and key.startswith(prefixes)
        and not (unlisted and key.startswith(unlisted))
        and not cursor.get("missing")
    ]


def _run(
    store: SessionStore,
    options: SyncOptions,
    tasks: list[Task],
    total: int,
    report: SyncReport,
    progress: ProgressSink,
) -> None:
    # With N processes on SQLite, this one writes and N - 1 parse (this one parses too while no
    # batch waits for it): on two cores one parser and the writer run 10% faster than two
    # parsers and the writer fighting over them, with one worker's memory less. At most
    # SQLITE_PARSERS parse beside the writer: more only wait for it, holding memory (a dry run,
    # with nothing to write, has them all). A store that takes writes side by side gets N
    # parsers that write. One process parses and writes inline.
    workers = min(options.workers, len(tasks) + 1) if total >= options.pool_min_bytes else 1
    if workers <= 1:
        if tasks and options.embeddings is not None and not options.dry_run:
            options.embeddings.load_in_background()  # this process forks no parsers
        run_tasks(store, options, tasks, report, progress.advance)
    else:
        from tracehouse.pipeline.workers import run_in_workers

        if store.concurrent_writes:
            parsers = workers
        elif options.dry_run:  # nothing to write: this process parses beside them
            parsers = workers - 1
        else:
            parsers = min(workers - 1, SQLITE_PARSERS)
        run_in_workers(store, options, tasks, parsers, report, progress.advance)
