"""Retrying what waiting can fix, the same way everywhere, and remembering why.

A ledger locked by another writer, a PostgreSQL deadlock, a server that is restarting, a Cursor
database being written while it is copied: each is worth waiting for, a few times, with a backoff
that grows and a jitter that keeps two laptops from retrying in step. tenacity runs the loop (its
stop, wait and sleep rules are well tried); this module holds the policy: which errors are worth
a retry, each named by a short reason, and a `RetryLog` that counts those reasons for the run
that met them, so `tracehouse runs` can say "3 retries: database is locked".
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from tenacity import RetryCallState
    from tenacity.stop import stop_base

T = TypeVar("T")

# The reason an error is worth retrying, or None when waiting cannot fix it.
Reason = Callable[[BaseException], str | None]


@dataclass(frozen=True)
class Backoff:
    """`attempts` tries in all (None: until the caller's sleep is interrupted), waiting about
    `first` seconds before the second and doubling up to `most`, each with up to `first` of
    jitter."""

    attempts: int | None
    first: float
    most: float


@dataclass
class RetryLog:
    """The retries a store or a watcher made, by reason, since the run that reads them began."""

    reasons: Counter[str] = field(default_factory=Counter)

    def note(self, reason: str) -> None:
        self.reasons[reason] += 1

    def take(self) -> Counter[str]:
        """The reasons noted so far, forgotten here: each run counts its own retries."""
        taken, self.reasons = self.reasons, Counter()
        return taken


def call(
    work: Callable[[], T],
    *,
    reason: Reason,
    backoff: Backoff,
    log: RetryLog | None = None,
    sleep: Callable[[float], None] = time.sleep,
    until: threading.Event | None = None,
    announce: Callable[[str], None] | None = None,
) -> T:
    """`work()`, again after each error `reason` names, until it succeeds or the tries run out;
    then the last error is raised as it was, for the caller to word. Errors `reason` does not
    name are raised at once. With `until`, the tries also end when it is set (a watcher told to
    stop), and the waits between them end early. `announce` hears each retry as a line.
    """

    # Nearly every call succeeds at once: it runs here, and only an error worth a retry builds
    # the tenacity loop (a Retrying per call was 2% of reading a Cursor database, and left a
    # reference cycle behind for the garbage collector each time).
    try:
        return work()
    except BaseException as exc:
        if reason(exc) is None:
            raise
        first = [exc]

    # tenacity too is imported only then: importing it was 17 ms of every command's start.
    from tenacity import (
        Retrying,
        retry_if_exception,
        stop_after_attempt,
        stop_never,
        stop_when_event_set,
        wait_exponential_jitter,
    )

    def again() -> T:
        """The loop's first try is the one made above: its error, raised again."""
        if first:
            raise first.pop()
        return work()

    def noted(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        if error is None:
            return
        why = reason(error) or type(error).__name__
        if log is not None:
            log.note(why)
        if announce is not None:
            announce(f"{error}; retrying in {state.upcoming_sleep:.1f}s")

    attempts = backoff.attempts
    stop: stop_base = stop_never if attempts is None else stop_after_attempt(attempts)
    if until is not None:
        stop = stop | stop_when_event_set(until)
        sleep = _waiter(until)  # a wait that ends when told to stop
    retrying = Retrying(
        retry=retry_if_exception(lambda exc: reason(exc) is not None),
        stop=stop,
        wait=wait_exponential_jitter(
            multiplier=backoff.first, max=backoff.most, jitter=backoff.first
        ),
        sleep=sleep,
        before_sleep=noted,
        reraise=True,
    )
    return retrying(again)


def _waiter(event: threading.Event) -> Callable[[float], None]:
    def wait(seconds: float) -> None:
        event.wait(seconds)

    return wait


def short(text: str, limit: int = 80) -> str:
    """A reason as a key that adds up across runs: its first line, trimmed."""
    line = text.strip().splitlines()[0] if text.strip() else "unknown"
    return line if len(line) <= limit else line[: limit - 1] + "…"
