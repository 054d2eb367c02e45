"""`/mcp`: the MCP tools over streamable HTTP, for a team's agents, behind a read token.

The same server as `tracehouse mcp`, each call answered with a store from the gateway's pool.
Stateless and answered in JSON: any gateway in front of the ledger takes any request, and no
session outlives its request. Only the Authorization header is taken, never the web view's
cookie, so a page in a browser cannot make calls with a signed-in user's token.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TypeVar

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tracehouse.gateway.pool import GatewayBusy, StorePool
from tracehouse.gateway.tokens import grant_for
from tracehouse.store.protocol import SessionStore

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from tracehouse.search.embedders import Lazy

T = TypeVar("T")
PATH = "/mcp"


class PooledLedger:
    """A store from the gateway's pool for each call."""

    def __init__(self, pool: StorePool) -> None:
        self.pool = pool

    async def run(self, work: Callable[[SessionStore], T]) -> T:
        async with self.pool.store() as store:
            return await asyncio.to_thread(work, store)


class McpEndpoint:
    """The ASGI app at `/mcp`: the bearer token checked, then the SDK's transport."""

    def __init__(self, pool: StorePool, embeddings: Lazy | None = None) -> None:
        from mcp.server.transport_security import TransportSecuritySettings

        from tracehouse.mcp_server.server import build_server, local_dispatch

        self.pool = pool
        self.server = build_server(local_dispatch(PooledLedger(pool), embeddings=embeddings))
        self.security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The transport for one life of the app: a session manager runs once, and an app's
        lifespan may start again (a test client starts it for each client)."""
        # Building the app makes the session manager; the route serves it directly (a mounted
        # sub-app would redirect `/mcp` to `/mcp/`). The gateway is reached by name, behind
        # its own TLS and tokens: the SDK's localhost-only Host check does not apply.
        self.server.streamable_http_app(
            stateless_http=True, json_response=True, transport_security=self.security
        )
        self.manager = self.server.session_manager
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = await self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if self.manager is None:
            raise RuntimeError("the gateway's lifespan has not started the MCP transport")
        await self.manager.asgi_app(scope, receive, send)

    async def _refusal(self, scope: Scope) -> JSONResponse | None:
        headers = dict(scope.get("headers") or [])
        header = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return _refused(401, "a read token is needed: Authorization: Bearer <token>")
        try:
            async with self.pool.store() as store:
                grant = await asyncio.to_thread(grant_for, store, token.strip())
        except GatewayBusy as exc:
            return JSONResponse({"detail": str(exc)}, 503, headers={"Retry-After": "1"})
        if grant is None:
            return _refused(401, "the token is not known to this gateway")
        if grant.scope != "read":
            return _refused(403, f"token {grant.name!r} has scope {grant.scope}, not read")
        return None


class McpPath:
    """Requests for `/mcp` go to the endpoint as they came (its transport reads the raw
    request); every other one to the app."""

    def __init__(self, app: ASGIApp, endpoint: McpEndpoint) -> None:
        self.app, self.endpoint = app, endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in (PATH, PATH + "/"):
            await self.endpoint(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def _refused(status: int, detail: str) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"detail": detail}, status, headers=headers)
