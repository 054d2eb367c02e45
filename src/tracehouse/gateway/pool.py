"""The gateway's stores: at most a few open at once, handed out to requests on the event loop.

A request waits for a store on the event loop, never on a worker thread. (The first gateway
waited on a blocking semaphore inside FastAPI's thread pool: once every one of its 40 threads
waited, the four holders had no thread left to finish on, and the gateway hung for good.) A
request that cannot get a store within `wait_seconds`, or arrives while `queue_limit` others
already wait, is answered `503` with `Retry-After`: the pushers retry with backoff, and a page
reloads. Opening a store (a PostgreSQL connection) runs on a thread, as every database call does.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from fastapi import HTTPException

from tracehouse.errors import StoreUnavailableError, TracehouseError
from tracehouse.store import open_store
from tracehouse.store.protocol import SessionStore

STATEMENT_TIMEOUT_MS = 120_000


class GatewayBusy(TracehouseError):
    """Every store is in use and the wait is over, or too many requests wait already."""


class StorePool:
    def __init__(
        self, address: str, size: int, wait_seconds: float = 10.0, queue_limit: int = 200
    ) -> None:
        if size < 1:
            raise ValueError("a store pool holds at least one store")
        self.address = address
        self.size = size
        self.wait_seconds = wait_seconds
        self.queue_limit = queue_limit
        self.lock = threading.Lock()  # idle and opened are touched from threads too
        self.idle: list[SessionStore] = []
        self.opened: list[SessionStore] = []
        self.waiting = 0
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _semaphore(self) -> asyncio.Semaphore:
        """The slots of the running loop (a test client may run the app on a new one)."""
        loop = asyncio.get_running_loop()
        if self._slots is None or self._loop is not loop:
            self._slots, self._loop = asyncio.Semaphore(self.size), loop
        return self._slots

    @asynccontextmanager
    async def store(self) -> AsyncIterator[SessionStore]:
        slots = self._semaphore()
        if self.waiting >= self.queue_limit and slots.locked():
            raise GatewayBusy(f"{self.waiting} requests wait for the ledger already; retry")
        self.waiting += 1
        try:
            await asyncio.wait_for(slots.acquire(), self.wait_seconds)
        except TimeoutError:
            waited = f"{self.wait_seconds:g} s"
            raise GatewayBusy(f"the ledger stayed busy for {waited}; retry") from None
        finally:
            self.waiting -= 1
        try:
            taken = self._take()
            store = taken if taken is not None else await asyncio.to_thread(self._open)
            try:
                yield store
            except (HTTPException, TracehouseError) as exc:
                if isinstance(exc, StoreUnavailableError):
                    self._discard(store)
                else:  # the request was at fault, not the connection
                    self._give(store)
                raise
            except BaseException:
                # Anything else may have left the connection broken (a database restarted
                # under it): the next request gets a new one rather than the same error.
                self._discard(store)
                raise
            else:
                self._give(store)
        finally:
            slots.release()

    def _take(self) -> SessionStore | None:
        with self.lock:
            return self.idle.pop() if self.idle else None

    def _give(self, store: SessionStore) -> None:
        with self.lock:
            self.idle.append(store)

    def _open(self) -> SessionStore:
        store = open_store(self.address, create=False, migrate=False)
        if store.backend == "postgresql":
            from tracehouse.store.postgres.store import PostgresStore

            assert isinstance(store, PostgresStore)
            # No request holds a store for ever: a statement past this is cancelled, the
            # request answered with its error, and the store goes back to the pool.
            store.conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
        with self.lock:
            self.opened.append(store)
        return store

    def _discard(self, store: SessionStore) -> None:
        with self.lock:
            if store in self.opened:
                self.opened.remove(store)
        with suppress(Exception):  # closing a broken connection may fail too; it is gone
            store.close()

    def close(self) -> None:
        """Close every store; the pool opens new ones if it is used again (an app whose
        lifespan ends and starts again, as a test client's does)."""
        with self.lock:
            self.idle.clear()
            for store in self.opened:
                with suppress(Exception):
                    store.close()
            self.opened.clear()
