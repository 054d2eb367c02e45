"""How the backfill's worker processes take a Ctrl-C while they start."""

from __future__ import annotations

import signal
import threading
from typing import Any


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
