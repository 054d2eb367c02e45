"""The gateway's access log: one line per request with its status, duration and sizes (the
bytes received, then the bytes sent: a GET receives none).

uvicorn's own access line has no duration, and a gateway's operator (and `bench/gateway_bench.py`)
needs one: how long a push took is the figure that says a gateway is keeping up. The line holds
the path without its query string, and tokens travel only in headers and cookies, so no token
ever reaches the log.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOGGER = "tracehouse.gateway.access"


class AccessLog:
    """ASGI middleware:
    `203.0.113.9 "POST /v1/sessions.import" 200 41.2 ms 1,204,518 B in 512 B out`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.log = logging.getLogger(LOGGER)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        seen = {"status": 500, "bytes": 0, "sent": 0}

        async def counted() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                seen["bytes"] += len(message.get("body", b""))
            return message

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            elif message["type"] == "http.response.body":
                seen["sent"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, counted, watched)
        finally:
            client = scope.get("client")
            self.log.info(
                '%s "%s %s" %d %.1f ms %s B in %s B out',
                client[0] if client else "-",
                scope["method"],
                scope["path"],
                seen["status"],
                (time.perf_counter() - start) * 1000,
                f"{seen['bytes']:,}",
                f"{seen['sent']:,}",
            )


def log_config() -> dict[str, Any]:
    """uvicorn's logging, with this log in place of its access log."""
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = {**LOGGING_CONFIG, "loggers": dict(LOGGING_CONFIG["loggers"])}
    config["handlers"] = {
        **LOGGING_CONFIG["handlers"],
        "requests": {"formatter": "default", "class": "logging.StreamHandler",
                     "stream": "ext://sys.stdout"},
    }  # fmt: skip
    config["loggers"][LOGGER] = {"handlers": ["requests"], "level": "INFO", "propagate": False}
    return config
