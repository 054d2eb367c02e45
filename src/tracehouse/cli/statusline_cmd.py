"""`tracehouse statusline`: the line Claude Code shows under its prompt (its `statusLine`
command), from the ledger. It reads the agent's JSON on standard input and always prints one
line and exits 0: an agent shows nothing for a command that fails."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from tracehouse.cli.common import Context, command
from tracehouse.errors import TracehouseError


@command
def statusline(
    ctx: Context,
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help="The agent running it: claude-code (the one whose status"
            " line hook passes its session id).",
        ),
    ] = "claude-code",
) -> None:
    """One line for an agent's status line: today's cost across every agent, the active 5-hour
    block and this session's tokens (docs/usage.md shows the setting)."""
    from tracehouse.reports.price_memo import remembered_prices
    from tracehouse.reports.pricing import own_prices_file
    from tracehouse.reports.statusline import AGENTS, status_line
    from tracehouse.shown import escaped_line

    if agent not in AGENTS:
        raise TracehouseError(f"--agent {agent!r}: one of {', '.join(AGENTS)}")
    payload = _payload(sys.stdin.read() if not sys.stdin.isatty() else "")
    prices = remembered_prices(own_prices_file())
    try:
        line = ctx.read(lambda ledger: status_line(
            ledger, payload, prices, provider=AGENTS[agent], limits=ctx.settings.limits,
        ))  # fmt: skip
    except TracehouseError as exc:
        line = f"tracehouse: {exc}"
    prices.save()
    typer.echo(escaped_line(line))


def _payload(text: str) -> dict[str, Any]:
    """The agent's document; anything else is an empty one (the line then has no session)."""
    try:
        found = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
