"""The gateway's ASGI app (`tracehouse serve`): the ledger's one write authority over HTTP.

FastAPI serves the routes and the OpenAPI document that is the HTTP contract; every route is as
thin as a CLI command and calls the library. Handlers are plain functions, run on the server's
thread pool, each holding one store from a small pool for the length of a request: a store is a
connection, and a gateway holds no state of its own besides them, so several gateways can stand
in front of one PostgreSQL ledger.
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from psycopg import OperationalError

from tracehouse import __version__
from tracehouse.errors import (
    ConfigError,
    IdempotencyConflict,
    RequestError,
    StoreLockedError,
    StoreUnavailableError,
    TracehouseError,
)
from tracehouse.gateway.access_log import AccessLog
from tracehouse.gateway.tokens import Grant, grant_for
from tracehouse.search.query import QueryError
from tracehouse.sinks import open_store
from tracehouse.sinks.protocol import SessionStore
from tracehouse.sinks.reads import SessionNotFound

MAX_REQUEST_BYTES = 32 * 2**20  # a sync batch is 8 MiB of source; its JSON is ~1.5× that
COOKIE = "tracehouse_token"  # the web view's copy of a read token (HttpOnly, SameSite=Strict)
_BEARER = re.compile(r"^Bearer\s+(\S+)$", re.IGNORECASE)


@dataclass(frozen=True)
class GatewayConfig:
    store: str  # what `--store` names: a SQLite path or a PostgreSQL DSN
    max_request_bytes: int = MAX_REQUEST_BYTES
    connections: int = 4  # stores held open at most (SQLite serialises writes anyway)
    poll_seconds: float = 1.0  # how often an open session page asks whether it changed


class StorePool:
    """At most `size` stores, opened when first needed and reused."""

    def __init__(self, address: str, size: int) -> None:
        self.address = address
        self.idle: queue.LifoQueue[SessionStore] = queue.LifoQueue()
        self.slots = threading.BoundedSemaphore(size)
        self.lock = threading.Lock()
        self.opened: list[SessionStore] = []

    @contextmanager
    def store(self) -> Iterator[SessionStore]:
        with self.slots:
            try:
                store = self.idle.get_nowait()
            except queue.Empty:
                store = open_store(self.address, create=False, migrate=False)
                with self.lock:
                    self.opened.append(store)
            try:
                yield store
            except (HTTPException, TracehouseError) as exc:
                if isinstance(exc, StoreUnavailableError):
                    self._discard(store)
                else:  # the request was at fault, not the connection
                    self.idle.put(store)
                raise
            except BaseException:
                # Anything else may have left the connection broken (a database restarted
                # under it): the next request gets a new one rather than the same error.
                self._discard(store)
                raise
            else:
                self.idle.put(store)

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
            while not self.idle.empty():
                self.idle.get_nowait()
            for store in self.opened:
                store.close()
            self.opened.clear()


def create_app(config: GatewayConfig) -> FastAPI:
    """The app for `config`; the store is opened (and migrated) once here, so a bad store
    fails at start-up, not on the first request."""
    open_store(config.store).close()
    pool = StorePool(config.store, config.connections)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        pool.close()

    app = FastAPI(
        lifespan=lifespan,
        title="tracehouse gateway",
        version=__version__,
        summary="The sessions.import contract over HTTP, and a view of every session.",
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.config = config
    app.state.pool = pool

    for error, status in (
        (RequestError, 400),
        (ConfigError, 400),
        (IdempotencyConflict, 409),
        (StoreLockedError, 503),
        (StoreUnavailableError, 503),
        (SessionNotFound, 404),
        (QueryError, 400),
        (TracehouseError, 400),  # any other user error: its message, as the CLI prints it
    ):
        app.add_exception_handler(error, _answer(status))
    # The database went away under a read: the pool reconnects on the next request. The
    # driver's own message may name the server, so the client gets a plain one.
    app.add_exception_handler(
        OperationalError,
        lambda request, exc: _answer(503)(
            request, StoreUnavailableError("the ledger's database did not answer")
        ),
    )

    from tracehouse.gateway import api, openapi, pages

    app.include_router(api.router)
    app.include_router(pages.router)
    app.add_middleware(AccessLog)
    openapi.install(app)
    return app


def _answer(status: int) -> Any:
    def handle(request: Request, exc: Exception) -> JSONResponse:
        headers = {"Retry-After": "1"} if status == 503 else None
        return JSONResponse({"detail": str(exc)}, status_code=status, headers=headers)

    return handle


def ledger(request: Request) -> Iterator[SessionStore]:
    """A store from the pool for the length of the request."""
    with request.app.state.pool.store() as store:
        yield store


Ledger = Annotated[SessionStore, Depends(ledger)]


def presented_token(request: Request) -> str | None:
    """The bearer token of the request, or the web view's cookie. Never a query parameter:
    URLs end up in access logs."""
    header = request.headers.get("authorization")
    if header:
        found = _BEARER.match(header)
        return found.group(1) if found else None
    return request.cookies.get(COOKIE)


def grant(request: Request, store: SessionStore, scope: str) -> Grant:
    token = presented_token(request)
    found = grant_for(store, token) if token else None
    if found is None:
        raise HTTPException(
            401,
            "a valid bearer token is needed (tracehouse serve tokens add NAME --scope …)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if found.scope != scope:
        raise HTTPException(403, f"token {found.name!r} has scope {found.scope}, not {scope}")
    return found


def push_grant(request: Request, store: Ledger) -> Grant:
    return grant(request, store, "push")


def read_grant(request: Request, store: Ledger) -> Grant:
    return grant(request, store, "read")


Pusher = Annotated[Grant, Depends(push_grant)]
Reader = Annotated[Grant, Depends(read_grant)]
