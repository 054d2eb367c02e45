"""Parsing in worker processes, writing in this one: one core writes, the others parse.

(A store that takes writes side by side, PostgreSQL or a gateway, is written by every worker
instead: each runs the inline `run_tasks` against its own connection, and the server's work
spreads over as many backends; one writer there took 4x SQLite's time, not 2x.)

Each worker runs `parse_batches` over its share of the units and sends each batch, ready to
commit, through a bounded queue; this process commits them as they come. A store write is
single-threaded in SQLite, so parsers that wrote for themselves queued on its lock while a core
idled; here parsing and writing overlap. Batches commit several to a transaction (see
GROUP_BYTES) through `store.import_group`.

Units are shared by size, largest first, so the workers finish together; a unit's chunks stay
in one worker and the queue keeps each sender's order, so they commit in file order. Workers are
started with `spawn` (polars' threads make fork unsafe) and stop when their parent dies.
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_module
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tracehouse.errors import TracehouseError
from tracehouse.pipeline.ingest import Ready, Task, commit, committed, parse_batches
from tracehouse.pipeline.sync import SyncOptions, SyncReport, run_tasks
from tracehouse.sinks import open_store
from tracehouse.sinks.protocol import SessionStore

POLL_SECONDS = 0.5
# A group's transaction stays open while the parsers send more, up to this much source. Each
# SQLite commit rewrites every index page it touched, and ids are hashes, so nearly all of them:
# on the 880 MB six-source corpus, committing what was waiting (64 MB at most) wrote 1.9x the
# bytes read; 256 MB groups write 1.48x, in the same time.
GROUP_BYTES = 256 * 1024 * 1024
QUEUED_PER_WORKER = 2  # batches a worker may parse ahead of the writer (memory: ~batch_bytes)


def share(tasks: list[Task], workers: int) -> list[list[Task]]:
    """Greedy balance by bytes: the largest unit goes to the least loaded worker."""
    groups: list[list[Task]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for task in sorted(tasks, key=lambda t: -t[2]):
        least = loads.index(min(loads))
        groups[least].append(task)
        loads[least] += task[2]
    return [g for g in groups if g]


@dataclass
class _Inbox:
    """What the workers send: batches to commit, and each worker's end (its report or error)."""

    messages: Any
    processes: list[Any]
    report: SyncReport
    advance: Callable[[int], None]
    running: int = 0
    errors: list[str] = field(default_factory=list)

    def next_ready(self, wait: bool) -> Ready | None:
        """The next batch, waiting up to POLL_SECONDS for it if `wait`; None when there is
        none (yet), after booking any worker's end that came first."""
        while self.running:
            try:
                kind, payload = (
                    self.messages.get(timeout=POLL_SECONDS) if wait else self.messages.get_nowait()
                )
            except queue_module.Empty:
                dead = [p for p in self.processes if p.exitcode not in (None, 0)]
                if wait and dead and self.messages.empty():
                    self.errors.append(
                        f"a parser process stopped unexpectedly (exit {dead[0].exitcode})"
                    )
                    self.running = 0
                return None
            if kind == "ready":
                self.advance(payload.bytes_read)
                return payload  # type: ignore[no-any-return]
            if kind == "progress":  # a worker that writes for itself
                self.advance(payload)
                continue
            self.running -= 1
            if kind == "done":
                self.report.merge(payload)
            else:
                self.errors.append(payload)
        return None


def run_in_workers(
    store: SessionStore,
    options: SyncOptions,
    tasks: list[Task],
    workers: int,
    report: SyncReport,
    advance: Callable[[int], None],
) -> None:
    context = multiprocessing.get_context("spawn")
    messages: Any = context.Queue(maxsize=QUEUED_PER_WORKER * workers)
    stopping = context.Event()  # set: each worker stops before its next unit
    portable = replace(options, on_batch=None, stop=None)
    address = store.address if store.concurrent_writes else None
    processes = [
        context.Process(
            target=_worker,
            args=(portable, group, report.run_id, messages, stopping, address),
            daemon=True,
        )
        for group in share(tasks, workers)
    ]
    held = _hold_ctrl_c()
    try:
        for process in processes:
            process.start()
    except BaseException:
        _release_ctrl_c(held, raise_caught=False)
        raise
    inbox = _Inbox(messages, processes, report, advance, running=len(processes))
    interrupted = False
    try:
        _release_ctrl_c(held)  # a Ctrl-C held back while they started stops the run here
        while inbox.running and not _stopped(options, stopping):
            _commit_next(store, inbox, stopping, report, options)
    except KeyboardInterrupt:  # Ctrl-C: what is committed stays; the rest is read next time
        interrupted = True
    finally:
        stopping.set()
        _drain(inbox)  # uncommitted batches are dropped: their units keep their old cursors
        for process in processes:
            process.join(timeout=5)
    if inbox.errors:
        raise TracehouseError(inbox.errors[0])
    if interrupted:
        raise KeyboardInterrupt


def _commit_next(
    store: SessionStore, inbox: _Inbox, stopping: Any, report: SyncReport, options: SyncOptions
) -> None:
    """Wait for a batch, then commit it with those that follow, up to GROUP_BYTES or until none
    comes for POLL_SECONDS. Each batch is let go once written (a group of them held to the end
    doubled the writer's memory): only its units' write times are kept for the lag."""
    first = inbox.next_ready(wait=True)
    if first is None:
        return
    written = list(first.written)
    size = first.bytes_read
    wrote = first.batch is not None
    with store.import_group() as write:
        commit(write, first, report)
        del first
        while size < GROUP_BYTES and not _stopped(options, stopping):
            more = inbox.next_ready(wait=True)
            if more is None:
                break
            commit(write, more, report)
            written.extend(more.written)
            size += more.bytes_read
            del more
    if wrote:
        committed(written, report, options.on_batch)


def _stopped(options: SyncOptions, stopping: Any) -> bool:
    """Asked before each batch: a stop (SIGTERM in live mode) commits what is written so far,
    not the rest of a group that may take seconds more."""
    if options.stop is not None and options.stop():
        stopping.set()
    return bool(stopping.is_set())


def _drain(inbox: _Inbox) -> None:
    """Take what the stopping workers still send until each has ended."""
    inbox.advance = lambda n: None
    while inbox.running:
        try:
            inbox.next_ready(wait=True)
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting for them
            break


def _worker(
    options: SyncOptions,
    tasks: list[Task],
    run_id: str,
    messages: Any,
    stopping: Any,
    address: str | None,
) -> None:
    """Parse and send each batch to the writer or, given a store's `address`, write too."""
    # Ctrl-C reaches the whole process group: the parent decides, through `stopping`.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()
    options = replace(options, stop=stopping.is_set)
    part = SyncReport(run_id=run_id, dry_run=options.dry_run)
    try:
        if address is None:
            for ready in parse_batches(options, tasks, run_id, part, lambda n: None):
                messages.put(("ready", ready))
        else:
            store = open_store(address)
            try:
                run_tasks(store, options, tasks, part, lambda n: messages.put(("progress", n)))
                part.retry_reasons.update(store.retry_log.take())
            finally:
                store.close()
    except TracehouseError as exc:
        messages.put(("error", str(exc)))
        return
    messages.put(("done", part))


def _hold_ctrl_c() -> tuple[Any, list[bool]] | None:
    """Hold a Ctrl-C back while the workers start: one that stopped this process mid-way through
    sending a worker its start-up data left the worker a truncated pickle and printed its
    traceback. Sending blocks until the worker reads it, a few hundred milliseconds, so the
    Ctrl-C is noted, not lost (ignoring it lost it; blocking the signal held it only for this
    thread, and another thread took it). None off the main thread, where Python cannot change
    handlers."""
    if threading.current_thread() is not threading.main_thread():
        return None
    caught: list[bool] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(True))
    return previous, caught


def _release_ctrl_c(held: tuple[Any, list[bool]] | None, *, raise_caught: bool = True) -> None:
    """Put the handler back; raise the KeyboardInterrupt that was held back, if any."""
    if held is None:
        return
    previous, caught = held
    signal.signal(signal.SIGINT, previous)
    if caught and raise_caught:
        raise KeyboardInterrupt


def _exit_with_parent() -> None:
    """A worker whose parent was killed stops instead of parsing on alone."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
