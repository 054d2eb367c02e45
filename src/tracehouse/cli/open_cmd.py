"""`tracehouse open [LABEL]`: the web view of this machine's ledger, signed in, in the browser."""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from tracehouse.cli.common import Context, command
from tracehouse.errors import ConfigError


@command
def open_view(
    ctx: Context,
    label: Annotated[
        str | None,
        typer.Argument(help="Open this session (a label, id or `last`); default: the list.",
                       show_default=False),
    ] = None,
    port: Annotated[
        int, typer.Option("--port", help="Port on 127.0.0.1 (0: any free one).", min=0, max=65535)
    ] = 0,
    browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="Open the browser at the link.")
    ] = True,
) -> None:  # fmt: skip
    """Open the ledger in the browser, signed in through a one-time link; only this machine
    can reach it (127.0.0.1). Ctrl-C stops it."""
    import uvicorn

    from tracehouse.gateway.access_log import log_config
    from tracehouse.gateway.app import GatewayConfig, create_app
    from tracehouse.gateway.local_view import LocalAccess, opener_file
    from tracehouse.store.location import parse_store
    from tracehouse.store.reads import find_session

    where = parse_store(ctx.settings.store)
    if where.backend == "gateway":
        raise ConfigError(f"{where.shown} is a gateway: open it in the browser and sign in there")
    then = "/"
    if label is not None:
        ledger = ctx.store(create=False)
        try:
            found = find_session(ledger, label)
        finally:
            ledger.close()
        from urllib.parse import quote

        then = "/s/" + quote(str(found["label"]), safe="")
    chosen = _free_port() if port == 0 else port
    access = LocalAccess()
    base = f"http://127.0.0.1:{chosen}"
    link = access.link(base, then)
    config = GatewayConfig(ctx.settings.store, local_access=access,
                           embeddings=ctx.settings.embeddings)  # fmt: skip
    app = create_app(config)
    ctx.err.print(f"tracehouse open: {base} · ledger {where.shown}", markup=False)
    ctx.err.print(f"sign in once with {link}", markup=False, soft_wrap=True)
    ctx.err.print("Ctrl-C stops it", markup=False)
    with tempfile.TemporaryDirectory(prefix="tracehouse-open-") as folder:
        if browser:
            import webbrowser

            webbrowser.open(opener_file(Path(folder), link).as_uri())
        uvicorn.run(app, host="127.0.0.1", port=chosen, log_level="warning",
                    log_config=log_config(), access_log=False)  # fmt: skip


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
