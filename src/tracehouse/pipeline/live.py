"""`sync live` (DESIGN §6): filesystem events drive the same sync as backfill.

A watchdog observer follows each source's directories; its handler only enqueues paths. One loop
coalesces them (a short quiet period, bounded by a maximum wait from the first event), maps them
to units through the parsers, and calls `sync` on those units. A periodic full scan catches what
events missed (inotify overflow, network filesystems). A store that is locked keeps the paths
queued and is retried with backoff. Stopping (SIGINT/SIGTERM) finishes the batch in hand.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from tracehouse import retrying, validate
from tracehouse.errors import StoreLockedError
from tracehouse.parsers.base import Unit
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline.options import SyncOptions, SyncReport, Targets
from tracehouse.pipeline.sync import sync
from tracehouse.state import scratch as scratch_space
from tracehouse.store.protocol import SessionStore

# Each try already waited out the store's own lock budget: wait longer between them, forever.
LOCKED_BACKOFF = retrying.Backoff(attempts=None, first=0.5, most=30.0)


@dataclass(frozen=True)
class LiveOptions:
    quiet_seconds: float = 0.02  # no new event for this long: flush
    max_wait_seconds: float = 0.1  # flush at the latest this long after the first event
    full_scan_interval: float = 300.0
    poll: bool = False
    poll_interval: float = 0.5

    def __post_init__(self) -> None:
        # A full scan rereads every directory: at 0 or below it would run in a busy loop.
        validate.seconds(self.full_scan_interval, "--full-scan-interval", 0.1)


@dataclass
class LiveStatus:
    flushes: int = 0
    sessions: int = 0
    rows: int = 0
    rejects: int = 0
    last_lag_ms: int | None = None
    observer: str = ""
    full_scans: int = 0
    retries: int = 0


class _Enqueue(FileSystemEventHandler):
    """Only records which paths changed; all work happens in the sync loop."""

    def __init__(self, paths: queue.SimpleQueue[str]) -> None:
        self.paths = paths

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.is_directory and event.event_type == "modified":
            return  # a file inside changed: that file has its own event
        self.paths.put(os.fsdecode(event.src_path))
        dest = getattr(event, "dest_path", "")
        if dest:  # a move or an atomic replace: the destination is what exists now
            self.paths.put(os.fsdecode(dest))


def start_observer(
    watched: list[Path],
    handler: FileSystemEventHandler,
    options: LiveOptions,
    log: Callable[[str], None],
) -> BaseObserver:
    """inotify (or the platform's native API); polling on request or when it cannot be had."""
    if not options.poll:
        observer: BaseObserver = Observer()
        try:
            for path in watched:
                observer.schedule(handler, str(path), recursive=True)
            observer.start()
            return observer
        except OSError as exc:  # inotify watch or instance limit, unsupported filesystem
            observer.unschedule_all()
            log(f"native file events unavailable ({exc}); polling every {options.poll_interval}s")
    observer = PollingObserver(timeout=options.poll_interval)
    for path in watched:
        observer.schedule(handler, str(path), recursive=True)
    observer.start()
    return observer


def targets_for(paths: set[str], sources: dict[str, list[Path]]) -> Targets:
    """Changed paths → the units they belong to; paths that are gone may be vanished units."""
    units: dict[str, dict[str, Unit]] = {p: {} for p in sources}
    gone: dict[str, list[str]] = {p: [] for p in sources}
    for path in paths:
        candidates = [path]
        if os.path.isdir(path):  # a new project, day or subagents folder: what is inside
            candidates = [os.path.join(d, f) for d, _, files in os.walk(path) for f in files]
        for candidate in candidates:
            for provider, roots in sources.items():
                unit = PARSERS[provider].unit_for(candidate, roots)
                if unit is not None:
                    units[provider][unit.key] = unit
                elif not os.path.exists(candidate):
                    gone[provider].append(os.path.abspath(candidate))
    return Targets({p: list(u.values()) for p, u in units.items()}, gone)


def run_live(
    store: SessionStore,
    options: SyncOptions,
    live: LiveOptions,
    stop: threading.Event,
    log: Callable[[str], None],
    on_flush: Callable[[LiveStatus], None] = lambda status: None,
) -> LiveStatus:
    """Catch up, then follow the sources until `stop` is set."""
    # What parsers keep between flushes (Cursor's database copies) lives as long as the watcher.
    with scratch_space.private_dir() as scratch:
        return _follow(store, replace(options, scratch=scratch), live, stop, log, on_flush)


def _follow(
    store: SessionStore,
    options: SyncOptions,
    live: LiveOptions,
    stop: threading.Event,
    log: Callable[[str], None],
    on_flush: Callable[[LiveStatus], None],
) -> LiveStatus:
    status = LiveStatus()
    sync_options = replace(options, mode="live", stop=stop.is_set, pool_min_bytes=1 << 62)
    catch_up = replace(options, stop=stop.is_set)
    sources = {p: list(roots) for p, roots in options.sources.items()}
    watched = [w for p, roots in sources.items() for w in PARSERS[p].watch_roots(roots)]
    paths: queue.SimpleQueue[str] = queue.SimpleQueue()
    # Watch before catching up: a change made while the catch-up reads is then queued, not lost
    # until the next full scan. Syncing a path twice is harmless; missing it is not.
    observer = start_observer([w for w in watched if w.is_dir()], _Enqueue(paths), live, log)
    status.observer = type(observer).__name__

    def retried(line: str) -> None:  # a flush that waits for the ledger, as the log says it
        status.retries += 1
        log(line)

    try:
        _account(status, sync(store, catch_up))
        on_flush(status)  # the catch-up's figures, before the first event
        next_scan = time.monotonic() + live.full_scan_interval
        while not stop.is_set():
            dirty = _collect(paths, live, min(1.0, max(0.0, next_scan - time.monotonic())))
            if not dirty:
                if time.monotonic() >= next_scan:  # what events may have missed
                    _account(status, sync(store, catch_up))
                    status.full_scans += 1
                    next_scan = time.monotonic() + live.full_scan_interval
                continue
            try:
                # Nothing is lost while the ledger stays locked: the same paths are tried again.
                # The waits go in the store's log, so the flush that succeeds counts them.
                report = retrying.call(
                    partial(_sync_paths, store, sync_options, dirty, sources),
                    reason=_locked,
                    backoff=LOCKED_BACKOFF,
                    log=store.retry_log,
                    until=stop,
                    announce=retried,
                )
            except StoreLockedError:
                break  # told to stop while locked: the next start reads these paths again
            _account(status, report)
            status.flushes += 1
            on_flush(status)
    finally:
        observer.stop()
        observer.join(timeout=5)
    return status


def _sync_paths(
    store: SessionStore, options: SyncOptions, dirty: set[str], sources: dict[str, list[Path]]
) -> SyncReport:
    return sync(store, options, targets=targets_for(dirty, sources))


def _collect(paths: queue.SimpleQueue[str], live: LiveOptions, wait: float) -> set[str]:
    """The paths of one burst: after the first, until quiet or the bounded wait is over."""
    try:
        first = paths.get(timeout=wait) if wait > 0 else paths.get_nowait()
    except queue.Empty:
        return set()
    dirty = {first}
    deadline = time.monotonic() + live.max_wait_seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            dirty.add(paths.get(timeout=min(live.quiet_seconds, left)))
        except queue.Empty:
            break
    return dirty


def _account(status: LiveStatus, report: SyncReport) -> None:
    status.sessions += report.statuses["imported"] + report.statuses["upserted"]
    status.rows += report.rows_written
    status.rejects += len(report.rejects)
    lag = report.tail_lag()[1]
    if lag is not None:
        status.last_lag_ms = lag


def _locked(exc: BaseException) -> str | None:
    return "ledger locked" if isinstance(exc, StoreLockedError) else None
