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


class Embedding:
    def __init__(self, address: str, setting: str) -> None:
        self.address = address
        self.model = Lazy(setting)
        self._running = threading.Lock()
        self._again = threading.Event()

    def after_write(self) -> None:
        """Embed what is waiting, in a thread; one already running goes round once more."""
        if not self.model.enabled:
            return
        self._again.set()
        if self._running.acquire(blocking=False):
            threading.Thread(target=self._run, name="embedding", daemon=True).start()

    def _run(self) -> None:
        try:
            while self._again.is_set():
                self._again.clear()
                store = open_store(self.address, create=False, migrate=False)
                try:
                    store.embed_backlog(self.model)
                finally:
                    store.close()
        except (TracehouseError, OSError) as error:  # the rows stand; the next write retries
            log.warning("search by meaning: %s", error)
        finally:
            self._running.release()

    def wait(self, timeout: float = 60.0) -> bool:
        """Until no embedding runs (tests, shutdown); False when one still ran at `timeout`."""
        if self._running.acquire(timeout=timeout):
            self._running.release()
            return True
        return False
