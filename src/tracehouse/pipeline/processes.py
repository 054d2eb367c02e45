"""How the backfill's worker processes start, stop with their parent, and take a Ctrl-C."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from typing import Any


def start_method() -> str:
    """`fork` where it is safe: on Linux, from a process that runs no other thread. A forked
    parser starts at once and shares the writer's compiled secret-scanning rules (~48 MB each
    parser would load for itself, in 0.3 s) until either writes to them, which neither does:
    on 2 cores a backfill's processes held 265-272 MB at their peak instead of 305-310.

    Anywhere else `spawn`: a fork copies only the forking thread, and a lock another thread
    held (polars' pool, imported by a library caller; a live watcher; a checkpointer; SQLite's
    own mutexes inside them) would stay locked in the child for good. Threads started by
    native code are not in `threading`'s list, so the kernel's is counted."""
    if sys.platform != "linux":
        return "spawn"
    try:
        threads = len(os.listdir("/proc/self/task"))
    except OSError:
        return "spawn"
    return "fork" if threads == 1 else "spawn"


def hold_ctrl_c() -> tuple[Any, list[bool]] | None:
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


def release_ctrl_c(held: tuple[Any, list[bool]] | None, *, raise_caught: bool = True) -> None:
    """Put the handler back; raise the KeyboardInterrupt that was held back, if any."""
    if held is None:
        return
    previous, caught = held
    signal.signal(signal.SIGINT, previous)
    if caught and raise_caught:
        raise KeyboardInterrupt


def exit_with_parent() -> None:
    """A worker whose parent was killed stops instead of parsing on alone."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
