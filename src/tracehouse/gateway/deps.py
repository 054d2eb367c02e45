"""What a route depends on: a store from the pool for the length of its request, and the grant
of the token it presented. Apart from the app (`app.py`) so that the routes, the pages and the
app that mounts them import it and not each other."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from tracehouse.gateway.tokens import Grant, grant_for
from tracehouse.store.protocol import SessionStore

COOKIE = "tracehouse_token"  # the web view's copy of a read token (HttpOnly, SameSite=Strict)
_BEARER = re.compile(r"^Bearer\s+(\S+)$", re.IGNORECASE)


async def ledger(request: Request) -> AsyncIterator[SessionStore]:
    """A store from the pool for the length of the request, waited for on the event loop."""
    async with request.app.state.pool.store() as store:
        yield store


async def probe(request: Request) -> AsyncIterator[SessionStore]:
    """The health check's own store."""
    async with request.app.state.probe.store() as store:
        yield store


Ledger = Annotated[SessionStore, Depends(ledger)]
Probe = Annotated[SessionStore, Depends(probe)]


def presented_token(request: Request) -> str | None:
    """The bearer token of the request, or the web view's cookie. Never a query parameter:
    URLs end up in access logs."""
    header = request.headers.get("authorization")
    if header:
        found = _BEARER.match(header)
        return found.group(1) if found else None
    return request.cookies.get(COOKIE)


def grant(request: Request, store: SessionStore, scope: str | None) -> Grant:
    """The request's grant, of `scope` (None: any)."""
    token = presented_token(request)
    local = getattr(request.app.state, "local_access", None)
    if token and local is not None and local.holds(token):  # `tracehouse open`'s own token
        found: Grant | None = Grant("open", "read")
    else:
        found = grant_for(store, token) if token else None
    if found is None:
        raise HTTPException(
            401,
            "a valid bearer token is needed (tracehouse serve tokens add NAME --scope …)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if scope is not None and found.scope != scope:
        raise HTTPException(403, f"token {found.name!r} has scope {found.scope}, not {scope}")
    return found


async def _granted(request: Request, scope: str | None) -> Grant:
    """The token's grant, looked up with a store taken for that alone: a route then takes its
    own only once its request is read (a slow upload holds no store)."""
    async with request.app.state.pool.store() as store:
        found: Grant = await asyncio.to_thread(grant, request, store, scope)
    return found


async def push_grant(request: Request) -> Grant:
    return await _granted(request, "push")


async def read_grant(request: Request) -> Grant:
    return await _granted(request, "read")


async def admin_grant(request: Request) -> Grant:
    return await _granted(request, "admin")


async def any_grant(request: Request) -> Grant:
    return await _granted(request, None)


Pusher = Annotated[Grant, Depends(push_grant)]
Reader = Annotated[Grant, Depends(read_grant)]
Admin = Annotated[Grant, Depends(admin_grant)]
Anyone = Annotated[Grant, Depends(any_grant)]
