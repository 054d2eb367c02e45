"""The gateway's search by meaning: its own model, which embeds what was pushed after each
sync's run and each producer's import, in a thread of its own, one embedding at a time.

A push is answered once its rows are committed; the vectors follow (seconds for a day's work
on WordLlama). Nothing a pusher sends picks the model: it is the operator's `embeddings`
setting, and queries are embedded by it too.
"""

from __future__ import annotations

import logging
import threading

from tracehouse.errors import TracehouseError
from tracehouse.search.embedders import Lazy
from tracehouse.store import open_store

log = logging.getLogger("tracehouse.gateway")


class _Stopped(Exception):
    """The gateway is shutting down: the embedding ends between two of its steps."""


class Embedding:
    def __init__(self, address: str, setting: str) -> None:
        self.address = address
        self.model = Lazy(setting)
        self._running = threading.Lock()
        self._again = threading.Event()
        self._stopping = threading.Event()

    def after_write(self) -> None:
        """Embed what is waiting, in a thread; one already running goes round once more."""
        if not self.model.enabled or self._stopping.is_set():
            return
        self._again.set()
        if self._running.acquire(blocking=False):
            # Not a daemon: the interpreter's exit tears a daemon down wherever it is, and one
            # in the tokenizer's native code aborts the process. `stop` ends it between steps.
            threading.Thread(target=self._run, name="embedding").start()

    def _run(self) -> None:
        try:
            while self._again.is_set() and not self._stopping.is_set():
                self._again.clear()
                store = open_store(self.address, create=False, migrate=False)
                try:
                    store.embed_backlog(self.model, self._step)
                finally:
                    store.close()
        except _Stopped:
            pass  # the steps done are committed; the rest waits for the next write
        except (TracehouseError, OSError) as error:  # the rows stand; the next write retries
            log.warning("search by meaning: %s", error)
        finally:
            self._running.release()

    def _step(self, done: int, total: int) -> None:
        """Called after each committed step of an embedding."""
        if self._stopping.is_set():
            raise _Stopped

    def wait(self, timeout: float = 60.0) -> bool:
        """Until no embedding runs (tests, shutdown); False when one still ran at `timeout`."""
        if self._running.acquire(timeout=timeout):
            self._running.release()
            return True
        return False

    def start(self) -> None:
        """Embeddings may run again: the app's life begins (a test client starts it for each
        client, after `stop` ended the last one)."""
        self._stopping.clear()

    def stop(self, timeout: float = 60.0) -> bool:
        """At shutdown: no embedding starts, and one running ends after the step it is in (a
        few seconds at most); False when it still ran at `timeout`."""
        self._stopping.set()
        return self.wait(timeout)
