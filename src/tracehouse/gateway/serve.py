"""Running the gateway: uvicorn in front of `create_app`, in one process or several.

Several processes (`--workers`) need the app built in each of them, so uvicorn is given a
factory and the options travel in an environment variable the processes inherit. The access
log is the gateway's own (`access_log.py`): methods, paths, statuses and durations, no token.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from tracehouse.config import parse_limits
from tracehouse.gateway.access_log import log_config
from tracehouse.gateway.app import MAX_REQUEST_BYTES, GatewayConfig, create_app
from tracehouse.store.location import parse_store

_ENV = "TRACEHOUSE_GATEWAY_OPTIONS"


@dataclass(frozen=True)
class ServeOptions:
    store: str
    host: str = "127.0.0.1"
    port: int = 8765
    certfile: str | None = None
    keyfile: str | None = None
    workers: int = 1
    connections: int = 4
    max_request_bytes: int = MAX_REQUEST_BYTES
    redact: bool = True
    allow_unredacted: bool = False
    redact_key_file: str = ""
    redact_patterns: dict[str, str] = field(default_factory=dict)
    redact_allow: tuple[str, ...] = ()
    # The proxies whose X-Forwarded-For names the real client (uvicorn's own default): the
    # sign-in brake counts failures per real client, not per proxy.
    forwarded_allow_ips: str = "127.0.0.1"
    # `[[limits]]` tables as the config holds them (JSON, for the worker processes).
    limits: list[dict[str, Any]] = field(default_factory=list)
    embeddings: str = "none"  # the model of search by meaning (`search/embedders.py`)

    def config(self) -> GatewayConfig:
        return GatewayConfig(
            self.store,
            self.max_request_bytes,
            self.connections,
            redact=self.redact,
            allow_unredacted=self.allow_unredacted,
            redact_key_file=self.redact_key_file,
            redact_patterns=self.redact_patterns,
            redact_allow=tuple(self.redact_allow),
            limits=parse_limits(self.limits),
            embeddings=self.embeddings,
        )


def app_from_environment() -> Any:
    """The app of one worker process (uvicorn's factory)."""
    return _lasting(create_app(ServeOptions(**json.loads(os.environ[_ENV])).config()))


def _lasting(app: Any) -> Any:
    """`app`, with what start-up made (routes, the MCP SDK's thousands of models) moved out of
    the cycle collector's sight: it lives as long as the process, and a full collection under
    load then walks only what the requests allocate."""
    gc.freeze()
    return app


def run(options: ServeOptions, say: Callable[[str], None]) -> None:
    import uvicorn

    where = parse_store(options.store)
    if where.backend == "gateway":
        from tracehouse.errors import ConfigError

        raise ConfigError("--store: the gateway serves a SQLite file or a PostgreSQL DSN")
    scheme = "https" if options.certfile else "http"
    say(f"tracehouse gateway on {scheme}://{options.host}:{options.port} · ledger {where.shown}")
    served: dict[str, Any] = {
        "host": options.host,
        "port": options.port,
        "log_level": "info",
        "log_config": log_config(),
        "access_log": False,
        "ssl_certfile": options.certfile,
        "ssl_keyfile": options.keyfile,
        "proxy_headers": True,
        "forwarded_allow_ips": options.forwarded_allow_ips,
    }
    if options.workers == 1:
        uvicorn.run(_lasting(create_app(options.config())), **served)
        return
    create_app(options.config())  # migrate once, and fail here on a bad store
    os.environ[_ENV] = json.dumps(asdict(options))
    uvicorn.run("tracehouse.gateway.serve:app_from_environment", factory=True,
                workers=options.workers, **served)  # fmt: skip
