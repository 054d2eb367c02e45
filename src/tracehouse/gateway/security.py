"""What every gateway response carries for the browser, and the guards of the sign-in form.

* Headers on every response: a Content-Security-Policy that lets a page run only the script it
  was rendered with (a nonce per request) and load nothing from elsewhere, no framing
  (`frame-ancestors`, `X-Frame-Options`), no MIME sniffing, no referrer across origins.
* Sign-in: the form carries a token that must match a cookie set with it (a page of another
  site cannot post it), and an address that fails ten times in a minute waits (`429`).

The failure counts are per process and kept for a minute: they are a brake on guessing, not
state of the ledger, so a gateway still holds nothing that another needs.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import time
from collections import deque
from collections.abc import Callable

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSRF_COOKIE = "tracehouse_csrf"
# /docs is FastAPI's Swagger page, whose script and styles come from a CDN.
UNGUARDED = ("/docs", "/docs/oauth2-redirect")


def policy(nonce: str) -> str:
    return (
        "default-src 'none'; "
        f"script-src 'nonce-{nonce}'; "
        "style-src 'unsafe-inline'; "
        "img-src 'self' data:; "
        "connect-src 'self'; "
        "form-action 'self'; "
        "frame-ancestors 'none'; "
        "base-uri 'none'"
    )


class SecurityHeaders:
    """ASGI middleware: the headers above, and `request.state.nonce` for the templates."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["nonce"] = nonce

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if scope["path"] not in UNGUARDED:
                    headers["Content-Security-Policy"] = policy(nonce)
                headers["X-Frame-Options"] = "DENY"
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "same-origin"
            await send(message)

        await self.app(scope, receive, sending)


def csrf_token() -> str:
    return secrets.token_urlsafe(32)


def csrf_matches(cookie: str | None, field: str | None) -> bool:
    return bool(cookie) and bool(field) and hmac.compare_digest(str(cookie), str(field))


class Failures:
    """Failed sign-ins per address over the last `window` seconds."""

    def __init__(self, most: int = 10, window: float = 60.0) -> None:
        self.most = most
        self.window = window
        self.seen: dict[str, deque[float]] = {}

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self.seen.setdefault(address, deque())
        while times and now - times[0] > self.window:
            times.popleft()
        if not times:
            del self.seen[address]
            return deque()
        return times

    def blocked_for(self, address: str) -> float:
        """Seconds until `address` may try again; 0 when it may now."""
        now = time.monotonic()
        times = self._recent(address, now)
        if len(times) < self.most:
            return 0.0
        return max(0.0, self.window - (now - times[0]))

    def add(self, address: str) -> None:
        self.seen.setdefault(address, deque()).append(time.monotonic())


class SlowBody(Exception):
    """A request body that stopped coming, or came slower than the least rate."""


class Admission:
    """ASGI middleware: at most `limit` requests inside the app at once, and at most `share`
    of them from one caller (its bearer token, or its cookie), less as other callers come in
    (`_room_for`); one more is answered `503` with
    `Retry-After` before any work is done for it. A crowd then costs the gateway little, the
    requests it admitted finish at their usual speed, and `/v1/health` (never turned away)
    answers within a second throughout.

    A body must keep coming: each of its chunks within `body_gap` seconds, and the whole at
    `least_rate` bytes a second after a first `body_gap`; else `408`. Without that, one push
    token's uploads that declare a length and never send it held every place inside, and every
    reader was answered `503`. While its body comes, a request holds one of its caller's
    `uploads` places too (a quarter of the places): a token's stalled uploads leave most of
    the gateway to the others, its own reads included."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int = 64,
        exempt: tuple[str, ...] = (),
        share: int | None = None,
        uploads: int | None = None,
        body_gap: float = 10.0,
        least_rate: float = 32 * 1024,
    ) -> None:
        self.app = app
        self.limit = limit
        self.share = share or max(1, limit // 2)
        self.uploads = uploads or max(1, limit // 4)
        self.reserve = max(1, limit // 8)
        self.exempt = exempt
        self.body_gap = body_gap
        self.least_rate = least_rate
        self.inside = 0
        self.by_caller: dict[bytes, int] = {}
        self.uploading: dict[bytes, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        caller = _caller(scope)
        uploading = _declares_body(scope)
        if not self._room_for(caller, uploading):
            await _answer(send, 503, b'{"detail":"the gateway is busy; retry"}', retry=True)
            return
        self.inside += 1
        _add(self.by_caller, caller, 1)
        if uploading:
            _add(self.uploading, caller, 1)
        started = False

        def body_in() -> None:
            nonlocal uploading
            if uploading:
                uploading = False
                _add(self.uploading, caller, -1)

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, self._paced(scope, receive, body_in), sending)
        except SlowBody as exc:
            if started:
                raise
            await _answer(send, 408, b'{"detail":"%s"}' % str(exc).encode())
        finally:
            self.inside -= 1
            _add(self.by_caller, caller, -1)
            body_in()

    def _room_for(self, caller: bytes, uploading: bool) -> bool:
        """Whether one more of `caller`'s requests may come in. A caller's share shrinks as
        others arrive (the places split evenly among the callers inside, at most `share`
        each): a crowd on one token kept taking each place another token's request freed, and
        a teammate's reads beside it were answered `503` now and then."""
        held = _count(self.by_caller, caller)
        callers = len(self.by_caller) + (0 if held else 1)
        fair = max(1, min(self.share, self.limit // callers))
        # A caller with nothing inside may take one of `reserve` places beyond the limit: a
        # crowd that filled the places before the others came leaves them within its answers'
        # time, and a teammate's read that came in that moment was answered `503`.
        room = self.limit if held else self.limit + self.reserve
        if self.inside >= room or held >= fair:
            return False
        return not (uploading and _count(self.uploading, caller) >= self.uploads)

    def _paced(self, scope: Scope, receive: Receive, body_in: Callable[[], None]) -> Receive:
        declared = next((int(v) for k, v in scope["headers"]
                         if k == b"content-length" and v.isdigit()), 0)  # fmt: skip
        deadline = time.monotonic() + self.body_gap + declared / self.least_rate

        whole = False  # once the body is in, `receive` waits for a disconnect: unpaced

        async def paced() -> Message:
            nonlocal whole
            if whole:
                return await receive()
            wait = min(self.body_gap, deadline - time.monotonic())
            try:
                message = await asyncio.wait_for(receive(), max(wait, 0.001))
            except TimeoutError:
                raise SlowBody("the request's body stopped coming or came too slowly") from None
            whole = message["type"] != "http.request" or not message.get("more_body", False)
            if whole:
                body_in()
            return message

        return paced


def _declares_body(scope: Scope) -> bool:
    for key, value in scope["headers"]:
        if (key == b"content-length" and value not in (b"0", b"")) or key == b"transfer-encoding":
            return True
    return False


def _count(counts: dict[bytes, int], caller: bytes) -> int:
    return counts.get(caller, 0)


def _add(counts: dict[bytes, int], caller: bytes, step: int) -> None:
    left = counts.get(caller, 0) + step
    if left > 0:
        counts[caller] = left
    else:
        counts.pop(caller, None)


def _caller(scope: Scope) -> bytes:
    """Who a request comes from, for its share of the places: its credential (a bearer token
    or the sign-in cookie), else nothing (such requests share one share, and are refused by
    the routes before they read a body)."""
    for key, value in scope["headers"]:
        if key in (b"authorization", b"cookie"):
            return bytes(value)
    return b""


async def _answer(send: Send, status: int, body: bytes, retry: bool = False) -> None:
    headers = [(b"content-type", b"application/json")]
    if retry:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
