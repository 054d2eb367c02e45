"""The gateway's ASGI app (`tracehouse serve`): the ledger's one write authority over HTTP.

FastAPI serves the routes and the OpenAPI document that is the HTTP contract; every route is as
thin as a CLI command and calls the library. Handlers are plain functions, run on the server's
thread pool, each holding one store from a small pool (`pool.py`) for the length of a request:
a store is a connection, and a gateway holds no state of its own besides them, so several
gateways can stand in front of one PostgreSQL ledger. `/v1/health` has a store of its own, so
that it answers while every other one is in use.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from psycopg import DataError, OperationalError
from starlette.requests import ClientDisconnect

from tracehouse import __version__
from tracehouse.config import Limit
from tracehouse.errors import (
    ConfigError,
    IdempotencyConflict,
    RequestError,
    StoreLockedError,
    StoreUnavailableError,
    TracehouseError,
)
from tracehouse.gateway.access_log import AccessLog
from tracehouse.gateway.pool import GatewayBusy, StorePool
from tracehouse.gateway.security import Admission, Failures, SecurityHeaders
from tracehouse.search.query import QueryError
from tracehouse.store import open_store
from tracehouse.store.reads import SessionNotFound

if TYPE_CHECKING:
    from tracehouse.gateway.local_view import LocalAccess
    from tracehouse.redaction.redactor import Redactor

MAX_REQUEST_BYTES = 32 * 2**20  # a sync batch is 8 MiB of source; its JSON is ~1.5× that


@dataclass(frozen=True)
class GatewayConfig:
    store: str  # what `--store` names: a SQLite path or a PostgreSQL DSN
    max_request_bytes: int = MAX_REQUEST_BYTES
    connections: int = 4  # stores held open at most (SQLite serialises writes anyway)
    wait_seconds: float = 10.0  # how long a request waits for a store before a 503
    queue_limit: int = 64  # requests waiting for a store at most; more are answered 503
    admitted: int = 32  # requests inside the app at once; one more is a 503 before any work
    poll_seconds: float = 1.0  # how often an open session page asks whether it changed
    # Pushes are redacted on arrival (an old or misconfigured client's too) with the gateway's
    # own key and patterns; one that says it was not redacted is refused unless allowed.
    redact: bool = True
    allow_unredacted: bool = False
    redact_key_file: str = ""
    redact_patterns: Mapping[str, str] = field(default_factory=dict)
    redact_allow: tuple[str, ...] = ()
    # The team's spending limits (`[[limits]]` of the operator's config): `GET /v1/usage/limits`
    # and the usage page show what each period spent against them.
    limits: tuple[Limit, ...] = ()
    # The model that embeds what is pushed and answers searches by meaning (`none`: lexical
    # only); `serve` passes the operator's `embeddings` setting.
    embeddings: str = "none"
    # `tracehouse open`: the read token this view alone knows and its one-time link's code.
    local_access: LocalAccess | None = None

    def redactor(self) -> Redactor | None:
        if not self.redact:
            return None
        from tracehouse.config import Settings
        from tracehouse.redaction import redactor_for

        settings = Settings(
            redact_key_file=self.redact_key_file,
            redact_patterns=self.redact_patterns,
            redact_allow=self.redact_allow,
        )
        return redactor_for(settings)


def create_app(config: GatewayConfig) -> FastAPI:
    """The app for `config`; the store is opened (and migrated) once here, so a bad store
    fails at start-up, not on the first request."""
    open_store(config.store).close()
    pool = StorePool(config.store, config.connections, config.wait_seconds, config.queue_limit)
    probe = StorePool(config.store, 1, wait_seconds=1.0, queue_limit=50)
    from tracehouse.gateway.embedding import Embedding
    from tracehouse.gateway.mcp_route import McpEndpoint, McpPath

    embedding = Embedding(config.store, config.embeddings)
    mcp = McpEndpoint(pool, embedding.model)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # health's own thread, for one life of the app (a test client may start it again)
        app.state.probe_thread = ThreadPoolExecutor(1, thread_name_prefix="health")
        embedding.start()
        async with mcp.running():
            yield
        embedding.stop()  # before the pools: an embedding step may still be committing
        pool.close()
        probe.close()
        app.state.probe_thread.shutdown(wait=False)

    app = FastAPI(
        lifespan=lifespan,
        title="tracehouse gateway",
        version=__version__,
        summary="The sessions.import contract over HTTP, and a view of every session.",
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.config = config
    app.state.redactor = config.redactor()  # the key is read (or made) at start-up
    app.state.pool = pool
    app.state.probe = probe
    app.state.embedding = embedding
    app.state.local_access = config.local_access

    for error, status in (
        (RequestError, 400),
        (ConfigError, 400),
        (IdempotencyConflict, 409),
        (StoreLockedError, 503),
        (GatewayBusy, 503),
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

    from tracehouse.gateway import api, openapi, pages, read_api, usage_page

    app.include_router(api.router)
    app.include_router(read_api.router)
    app.include_router(pages.router)
    app.include_router(usage_page.router)
    # A value PostgreSQL cannot hold (a NUL in a key, a number past its type) came from the
    # request: a 400 that says so, not a 500.
    app.add_exception_handler(
        DataError,
        lambda request, exc: _answer(400)(
            request, RequestError(f"a value the ledger cannot hold: {str(exc).splitlines()[0]}")
        ),
    )
    app.add_middleware(McpPath, endpoint=mcp)  # `/mcp` to the SDK's transport, as it is
    app.add_middleware(SecurityHeaders)
    app.add_middleware(Admission, limit=config.admitted, exempt=("/v1/health",))
    app.add_middleware(AccessLog)
    app.state.failures = Failures()
    # What the pages render (Markdown, code, diffs), kept for the app's life: a page read again
    # costs little.
    from tracehouse.exports.rendering import Renderer

    app.state.renderer = Renderer()
    app.add_exception_handler(ClientDisconnect, _gone)
    openapi.install(app)
    return app


def _gone(request: Request, exc: Exception) -> Response:
    """A client that went away mid-upload: one access-log line, no traceback, nothing stored."""
    return Response(status_code=400)


def _answer(status: int) -> Any:
    def handle(request: Request, exc: Exception) -> JSONResponse:
        headers = {"Retry-After": "1"} if status == 503 else None
        return JSONResponse({"detail": str(exc)}, status_code=status, headers=headers)

    return handle
