"""Child processes of a sync: how they start (forked where that is safe) and how they stop with
their parent. The pipeline's parsers and the SQLite writer's index builders both start this way."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading


def start_method() -> str:
    """`fork` where it is safe: on Linux, from a process that runs no other thread. A forked
    parser starts at once and shares the writer's compiled secret-scanning rules (~48 MB each
    parser would load for itself, in 0.3 s) until either writes to them, which neither does:
    on 2 cores a backfill's processes held 265-272 MB at their peak instead of 305-310.

    Anywhere else `spawn`: a fork copies only the forking thread, and a lock another thread
    held (polars' pool, imported by a library caller; a live watcher; a checkpointer; SQLite's
    own mutexes inside them) would stay locked in the child for good. Threads started by
    native code are not in `threading`'s list, so the kernel's is counted (numpy's OpenBLAS
    starts its pool as it loads: the command line keeps it from doing so, `one_blas_thread`)."""
    if sys.platform != "linux":
        return "spawn"
    try:
        threads = len(os.listdir("/proc/self/task"))
    except OSError:
        return "spawn"
    return "fork" if threads == 1 else "spawn"


def exit_with_parent() -> None:
    """A worker whose parent was killed stops instead of parsing on alone."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
