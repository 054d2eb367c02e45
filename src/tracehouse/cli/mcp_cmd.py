"""`tracehouse mcp`: the ledger as an MCP server over stdio, for agents to consult."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from tracehouse.cli.common import Context, command
from tracehouse.errors import ConfigError
from tracehouse.mcp_server.agent_config import AGENTS, http_config, server_command, stdio_config
from tracehouse.store.location import GATEWAY_SCHEMES


@command
def mcp(
    ctx: Context,
    print_config: Annotated[
        str | None,
        typer.Option(
            "--print-config",
            metavar="AGENT",
            help=f"Print the setup for {', '.join(AGENTS)} instead of serving.",
            show_default=False,
        ),
    ] = None,
    call: Annotated[
        str | None,
        typer.Option(
            "--call",
            metavar="TOOL",
            help="Call one tool through the server, as an agent would, and print its answer.",
            show_default=False,
        ),
    ] = None,
    arguments: Annotated[
        str,
        typer.Option("--args", metavar="JSON", help="The --call's arguments, a JSON object."),
    ] = "{}",
) -> None:
    """Serve the ledger to coding agents over MCP (stdio): search, list_sessions, read_session,
    files_touched and usage. An agent starts it; --print-config AGENT shows how."""
    location = ctx.settings.store
    gateway = location.startswith(GATEWAY_SCHEMES)
    if print_config is not None:
        if print_config not in AGENTS:
            raise ConfigError(f"--print-config {print_config!r}: one of {', '.join(AGENTS)}")
        if gateway:
            typer.echo(http_config(print_config, location))
        else:
            typer.echo(stdio_config(print_config, server_command(location, None)))
        return
    if gateway:
        raise ConfigError(
            f"{location} is a gateway: it serves MCP itself at {location.rstrip('/')}/mcp to a"
            f" read token; `tracehouse mcp --store {location} --print-config AGENT` prints the"
            " setup"
        )
    from tracehouse.mcp_server.server import OneStore, build_server, call_once, local_dispatch
    from tracehouse.search.embedders import Lazy

    given = _arguments(arguments) if call is not None else {}
    store = ctx.store(create=False)
    try:
        embeddings = Lazy(ctx.settings.embeddings)
        server = build_server(local_dispatch(OneStore(store), embeddings=embeddings))
        if call is None:
            server.run("stdio")
            return
        failed, text = call_once(server, call, given)
    finally:
        store.close()
    if ctx.json:
        ctx.print_json({"tool": call, "isError": failed, "text": text})
    elif failed:
        typer.echo(f"tracehouse: {text}", err=True)
    else:
        typer.echo(text)
    if failed:
        raise typer.Exit(1)


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"--args: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ConfigError('--args: a JSON object, e.g. \'{"query": "retry policy"}\'')
    return value
