"""Sharing a sync out to worker processes (two cores: parse and write in both).

Each worker runs `run_tasks`, the same loop as an inline sync, over its share of the units,
against its own connection to the store, and reports progress and its part of the run report
through a queue. Units are shared by size, largest first, so the workers finish together; a
unit's chunks stay in one worker, so they commit in file order. Workers are started with
`spawn` (polars' threads make fork unsafe) and stop when their parent dies.
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_module
import signal
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tracehouse.errors import TracehouseError
from tracehouse.pipeline.sync import SyncOptions, SyncReport, Task, run_tasks
from tracehouse.sinks import open_store

POLL_SECONDS = 0.5


def share(tasks: list[Task], workers: int) -> list[list[Task]]:
    """Greedy balance by bytes: the largest unit goes to the least loaded worker."""
    groups: list[list[Task]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for task in sorted(tasks, key=lambda t: -t[2]):
        least = loads.index(min(loads))
        groups[least].append(task)
        loads[least] += task[2]
    return [g for g in groups if g]


def run_in_workers(
    location: str,
    options: SyncOptions,
    tasks: list[Task],
    workers: int,
    report: SyncReport,
    advance: Callable[[int], None],
) -> None:
    context = multiprocessing.get_context("spawn")
    messages: Any = context.Queue()
    stopping = context.Event()  # set: each worker stops after committing the batch in hand
    portable = replace(options, on_batch=None, stop=None)
    processes = [
        context.Process(
            target=_worker,
            args=(location, portable, group, report.run_id, messages, stopping),
            daemon=True,
        )
        for group in share(tasks, workers)
    ]
    for process in processes:
        process.start()
    running = len(processes)
    errors: list[str] = []
    interrupted = False
    while running:
        if options.stop is not None and options.stop():
            stopping.set()
        try:
            kind, payload = messages.get(timeout=POLL_SECONDS)
        except KeyboardInterrupt:  # Ctrl-C: let the workers commit what they hold, then stop
            interrupted = True
            stopping.set()
            continue
        except queue_module.Empty:
            dead = [p for p in processes if p.exitcode not in (None, 0)]
            if dead and messages.empty():
                errors.append(f"a parser process stopped unexpectedly (exit {dead[0].exitcode})")
                break
            continue
        if kind == "progress":
            advance(payload)
        elif kind == "done":
            report.merge(payload)
            running -= 1
        else:
            errors.append(payload)
            running -= 1
    for process in processes:
        process.join(timeout=5)
    if errors:
        raise TracehouseError(errors[0])
    if interrupted:
        raise KeyboardInterrupt


def _worker(
    location: str,
    options: SyncOptions,
    tasks: list[Task],
    run_id: str,
    messages: Any,
    stopping: Any,
) -> None:
    # Ctrl-C reaches the whole process group: the parent decides, through `stopping`.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()
    options = replace(options, stop=stopping.is_set)
    part = SyncReport(run_id=run_id, dry_run=options.dry_run)
    try:
        store = open_store(location)
        try:
            run_tasks(store, options, tasks, part, lambda n: messages.put(("progress", n)))
            part.retry_reasons.update(store.retry_log.take())
        finally:
            store.close()
    except TracehouseError as exc:
        messages.put(("error", str(exc)))
        return
    messages.put(("done", part))


def _exit_with_parent() -> None:
    """A worker whose parent was killed stops instead of writing on alone."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
