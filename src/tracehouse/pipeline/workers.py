"""Parsing in worker processes, writing in this one: one core writes, the others parse.

(A store that takes writes side by side, PostgreSQL or a gateway, is written by every worker
instead: each runs the inline `run_tasks` against its own connection, and the server's work
spreads over as many backends; one writer there took 4x SQLite's time, not 2x.)

Each worker runs `parse_batches` over the units it takes from a shared `TaskBoard` and sends
each batch, ready to commit, through a bounded queue; this process commits them as they come. A
store write is single-threaded in SQLite, so parsers that wrote for themselves queued on its lock
while a core idled; here parsing and writing overlap. Batches commit several to a transaction
(see GROUP_BYTES) through `store.import_group`.

The board holds the units largest first. Workers take from the front, so the largest start first
and the workers finish together; the writer takes the smallest from the back whenever no batch is
waiting for it, and parses them itself (see `_steal`). A unit's chunks stay in the process that
took it and the queue keeps each sender's order, so they commit in file order. Workers stop when
their parent dies; how they start is `start_method`'s choice.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue as queue_module
import signal
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from tracehouse.errors import TracehouseError
from tracehouse.parsers.registry import import_readers
from tracehouse.pipeline import collect_less
from tracehouse.pipeline.ctrl_c import hold_ctrl_c, release_ctrl_c
from tracehouse.pipeline.ingest import Ready, Task, commit, committed, parse_batches, run_tasks
from tracehouse.pipeline.options import SyncOptions, SyncReport
from tracehouse.processes import exit_with_parent, start_method
from tracehouse.redaction.detect import settle_prefetched
from tracehouse.state import scratch as scratch_space
from tracehouse.store import open_store
from tracehouse.store.protocol import SessionStore
from tracehouse.store.sqlite.binds import for_writer

POLL_SECONDS = 0.5
# A group's transaction stays open while the parsers send more, up to this much source. Each
# SQLite commit rewrites every index page it touched, and ids are hashes, so nearly all of them:
# on the 880 MB six-source corpus, committing what was waiting (64 MB at most) wrote 1.9x the
# bytes read; 256 MB groups write 1.48x, in the same time.
GROUP_BYTES = 256 * 1024 * 1024
QUEUED_PER_WORKER = 2  # batches a worker may parse ahead of the writer (memory: ~batch_bytes)
# What the writer parses at a time when no batch waits for it: units from the small end of the
# board, a few ms of parsing, so that a batch sent meanwhile waits little. On the 880 MB bench
# corpus the writer waited for its one parser 4.1 s of a 14.5 s run, in gaps of 50-700 ms; a
# larger unit is left to the workers.
STEAL_BYTES = 2 * 1024 * 1024


class TaskBoard:
    """The run's units, largest first, shared by every process that parses: workers take from
    the front, the writer from the back, each unit once.

    The units travel to the workers through a file in the run's private scratch directory, not
    with the process: `spawn` writes a process's start-up data into a pipe and, past the pipe's
    64 KiB, waits until the child has imported its main module and read it. With the unit list
    inside (2,952 units: ~600 KB) each launch held the parent ~0.45 s, one worker after another,
    while the writer waited: 7 s before a sixteenth worker parsed on a 16-core machine."""

    def __init__(self, tasks: list[Task], context: Any, spill_dir: str) -> None:
        self._tasks: list[Task] | None = sorted(tasks, key=lambda t: -t[2])
        self._lock = context.Lock()
        self._front = context.RawValue("q", 0)
        self._back = context.RawValue("q", len(self._tasks))  # one past the last untaken
        fd, self._path = tempfile.mkstemp(prefix="units-", dir=spill_dir)  # 0600
        with os.fdopen(fd, "wb") as f:
            pickle.dump(self._tasks, f, protocol=pickle.HIGHEST_PROTOCOL)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_tasks": None}

    @property
    def tasks(self) -> list[Task]:
        if self._tasks is None:  # in a worker: read once, side by side with the others
            with open(self._path, "rb") as f:
                self._tasks = pickle.load(f)  # written by this run's parent, 0600
        return self._tasks

    def front(self) -> Iterator[Task]:
        """The largest untaken unit, one at a time, until none is left."""
        while True:
            with self._lock:
                at = self._front.value
                if at >= self._back.value:
                    return
                self._front.value = at + 1
            yield self.tasks[at]

    def back(self, most_bytes: int) -> list[Task]:
        """The smallest untaken units, as many as fit in `most_bytes` (none if the smallest
        does not)."""
        taken: list[Task] = []
        size = 0
        with self._lock:
            while self._back.value > self._front.value:
                task = self.tasks[self._back.value - 1]
                if size + task[2] > most_bytes:
                    break
                self._back.value -= 1
                taken.append(task)
                size += task[2]
        return taken


@dataclass
class _Inbox:
    """What the workers send: batches to commit, and each worker's end (its report or error)."""

    messages: Any
    processes: list[Any]
    report: SyncReport
    advance: Callable[[int], None]
    running: int = 0
    errors: list[str] = field(default_factory=list)
    # Set when this process writes: parses the smallest units left, while no batch waits.
    steal: Callable[[], list[Ready]] | None = None
    stolen: deque[Ready] = field(default_factory=deque)

    @property
    def open(self) -> bool:
        """Whether more batches may come: a worker still running, or parsed ones in hand."""
        return bool(self.running or self.stolen)

    def next_ready(self) -> Ready | None:
        """The next batch: one a worker sent or, while none waits, one parsed here from the
        smallest units left. Waits up to POLL_SECONDS once there is nothing left to steal;
        None when nothing came (yet), after booking any worker's end that came first."""
        while True:
            if self.stolen:
                return self.stolen.popleft()
            ready = self.receive(wait=False)
            if ready is not None or not self.running:
                return ready
            if self.steal is not None:
                self.stolen.extend(self.steal())
                if self.stolen:
                    continue
            return self.receive(wait=True)

    def receive(self, wait: bool) -> Ready | None:
        """A batch a worker sent, waiting up to POLL_SECONDS for it if `wait`; None when none
        came, after booking any worker's end that came first."""
        while self.running:
            began = time.perf_counter()
            try:
                kind, payload = (
                    self.messages.get(timeout=POLL_SECONDS) if wait else self.messages.get_nowait()
                )
                if kind == "ready":
                    payload = pickle.loads(payload)  # pickled by the worker: see `_worker`
            except queue_module.Empty:
                self.report.phases["wait"] += time.perf_counter() - began
                dead = [p for p in self.processes if p.exitcode not in (None, 0)]
                if wait and dead and self.messages.empty():
                    self.errors.append(
                        f"a parser process stopped unexpectedly (exit {dead[0].exitcode})"
                    )
                    self.running = 0
                return None
            self.report.phases["wait"] += time.perf_counter() - began
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
    with scratch_space.private_dir(options.scratch) as spill:  # the units' spill file
        # The loads of the rules under way (the plan's, the command line's): no other thread
        # at the fork.
        settle_prefetched()
        if options.redactor is not None:
            options.redactor.detector.settle()
        method = start_method()
        if method == "fork":  # loaded once here, shared by every parser
            import_readers(unit.provider for unit, _, _ in tasks)
            if options.redactor is not None:
                options.redactor.detector.warm()
        context: Any = multiprocessing.get_context(method)
        messages: Any = context.Queue(maxsize=QUEUED_PER_WORKER * workers)
        stopping = context.Event()  # set: each worker stops before its next unit
        portable = replace(options, on_batch=None, on_commit=None, stop=None, embeddings=None)
        address = store.address if store.concurrent_writes else None
        board = TaskBoard(tasks, context, spill)
        launched = time.time()
        processes = [
            context.Process(
                target=_worker,
                args=(portable, board, report.run_id, messages, stopping, address, launched),
                daemon=True,
            )
            for _ in range(min(workers, len(tasks)))
        ]
        held = hold_ctrl_c()
        began = time.perf_counter()
        try:
            for process in processes:
                process.start()
        except BaseException:
            release_ctrl_c(held, raise_caught=False)
            raise
        report.phases["launch"] += time.perf_counter() - began
        inbox = _Inbox(messages, processes, report, advance, running=len(processes))
        if address is None:  # this process writes: it parses too while no batch waits for it
            here = replace(portable, stop=stopping.is_set)  # as the workers parse
            inbox.steal = lambda: _steal(board, here, inbox, stopping)
        interrupted = False
        try:
            release_ctrl_c(held)  # a Ctrl-C held back while they started stops the run here
            while inbox.open and not _stopped(options, stopping):
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
    first = inbox.next_ready()
    if first is None:
        return
    written = list(first.written)
    size = first.bytes_read
    wrote = first.batch is not None
    with store.import_group(builders=_builders(options)) as write:
        commit(write, first, report)
        del first
        while size < GROUP_BYTES and not _stopped(options, stopping):
            more = inbox.next_ready()
            if more is None:
                break
            commit(write, more, report)
            written.extend(more.written)
            size += more.bytes_read
            del more
        closing = time.perf_counter()
    report.phases["write"] += time.perf_counter() - closing  # the last flush and the commit
    if wrote:
        committed(written, report, options.on_batch)


def _builders(options: SyncOptions) -> bool:
    """Whether this machine has the cores to build the search index beside the writer."""
    wanted = options.builders_min_cores
    return 0 < wanted <= (os.cpu_count() or 1)


def _steal(board: TaskBoard, options: SyncOptions, inbox: _Inbox, stopping: Any) -> list[Ready]:
    """Parse the smallest units left on the board here, in time the writer would spend waiting
    for a batch; their batches commit like any other."""
    if stopping.is_set():
        return []
    tasks = board.back(STEAL_BYTES)
    if not tasks:
        return []
    try:
        return list(parse_batches(options, tasks, inbox.report.run_id, inbox.report, inbox.advance))
    except TracehouseError as exc:  # as a worker's error would: commit what is in hand, stop
        inbox.errors.append(str(exc))
        stopping.set()
        return []


def _stopped(options: SyncOptions, stopping: Any) -> bool:
    """Asked before each batch: a stop (SIGTERM in live mode) commits what is written so far,
    not the rest of a group that may take seconds more."""
    if options.stop is not None and options.stop():
        stopping.set()
    return bool(stopping.is_set())


def _drain(inbox: _Inbox) -> None:
    """Take what the stopping workers still send until each has ended."""
    inbox.advance = lambda n: None
    inbox.steal = None
    while inbox.running:
        try:
            inbox.receive(wait=True)
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting for them
            break


def _worker(
    options: SyncOptions,
    board: TaskBoard,
    run_id: str,
    messages: Any,
    stopping: Any,
    address: str | None,
    launched: float,
) -> None:
    """Parse and send each batch to the writer or, given a store's `address`, write too."""
    # Ctrl-C reaches the whole process group: the parent decides, through `stopping`.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent()
    collect_less()
    options = replace(options, stop=stopping.is_set)
    part = SyncReport(run_id=run_id, dry_run=options.dry_run)
    part.phases["start"] += time.time() - launched  # interpreter, imports, start-up data
    try:
        if address is None:
            for ready in parse_batches(options, board.front(), run_id, part, lambda n: None):
                # Pickled here, not by the queue's feeder thread: a batch waiting in the queue is
                # its bytes alone, not its objects and, while the thread sends it, its bytes too;
                # and one that cannot be pickled stops this worker with an error instead of
                # being dropped by the thread with a line on stderr.
                data = pickle.dumps(_hinted(ready, part), protocol=pickle.HIGHEST_PROTOCOL)
                del ready
                began = time.perf_counter()
                messages.put(("ready", data))
                part.phases["send"] += time.perf_counter() - began
                del data
        else:
            store = open_store(address)
            try:
                run_tasks(
                    store, options, board.front(), part, lambda n: messages.put(("progress", n))
                )
                part.retry_reasons.update(store.retry_log.take())
                part.book_store_timings(store)
            finally:
                store.close()
    except TracehouseError as exc:
        messages.put(("error", str(exc)))
        return
    messages.put(("done", part))


def _hinted(ready: Ready, report: SyncReport) -> Ready:
    """A batch ready for SQLite's writer (`binds.for_writer`): work done here, in a parser."""
    if ready.batch is None:
        return ready
    began = time.perf_counter()
    batch = for_writer(ready.batch)
    report.phases["parse"] += time.perf_counter() - began
    return replace(ready, batch=batch)
