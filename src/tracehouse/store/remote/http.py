"""One gateway connection: JSON over HTTP with a bearer token, retried where waiting can help.

httpx keeps the connection alive between batches and bounds every wait; tenacity (through
`retrying`) retries network errors and 5xx answers with jittered backoff, so eight laptops that
lost their gateway at once do not come back in step. A 4xx is the pusher's own mistake and is
never retried. Retrying a `sessions.import` is safe because every request carries an
idempotency key: one that was applied before the connection dropped is answered from the
gateway's log and not written twice.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from tracehouse import retrying
from tracehouse.errors import RequestError, StoreError, StoreUnavailableError

BACKOFF = retrying.Backoff(attempts=8, first=0.25, most=8.0)
TIMEOUT = httpx.Timeout(120.0, connect=10.0)  # a large batch on a busy gateway takes a while


class ServerError(Exception):
    """A 5xx: the gateway or its store is having a bad moment (retried)."""


class Gateway:
    def __init__(self, url: str, token: str, machine: str, shown: str, log: retrying.RetryLog):
        self.shown = shown  # the URL without its token, for messages
        self.log = log
        self.client = httpx.Client(
            base_url=url.rstrip("/"),
            headers={
                "Authorization": f"Bearer {token}",
                "X-Tracehouse-Machine": machine,
                "Content-Type": "application/json",
            },
            timeout=TIMEOUT,
        )

    def call(self, method: str, path: str, body: bytes | None = None) -> Any:
        """The decoded JSON answer; a RequestError for a 4xx (with the gateway's reason), a
        StoreUnavailableError once the retries for a network error or a 5xx run out."""
        try:
            return retrying.call(
                lambda: self._once(method, path, body),
                reason=_reason,
                backoff=BACKOFF,
                log=self.log,
            )
        except (httpx.TransportError, ServerError) as exc:
            raise StoreUnavailableError(
                f"{self.shown}: gave up after {BACKOFF.attempts} tries: {_words(exc)}"
            ) from None

    def _once(self, method: str, path: str, body: bytes | None) -> Any:
        response = self.client.request(method, path, content=body)
        if response.status_code >= 500:
            raise ServerError(f"{response.status_code} {_detail(response)}")
        if response.status_code in (401, 403):
            raise StoreError(f"{self.shown}: {response.status_code} {_detail(response)}")
        if response.status_code >= 400:
            raise RequestError(f"{self.shown}{path}: {response.status_code} {_detail(response)}")
        return orjson.loads(response.content) if response.content else None

    def close(self) -> None:
        self.client.close()


def _detail(response: httpx.Response) -> str:
    try:
        detail = orjson.loads(response.content).get("detail")
    except (orjson.JSONDecodeError, AttributeError):
        detail = None
    if isinstance(detail, list):  # FastAPI's validation errors: name the first field
        first = detail[0] if detail else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        detail = f"{where}: {first.get('msg', '')}"
    return str(detail or response.reason_phrase)


def _reason(exc: BaseException) -> str | None:
    if isinstance(exc, ServerError):
        return f"gateway {str(exc).split(' ', 1)[0]}"
    if isinstance(exc, httpx.TransportError):
        return f"gateway unreachable ({type(exc).__name__})"
    return None


def _words(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
