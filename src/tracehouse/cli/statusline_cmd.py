"""`tracehouse statusline`: the line Claude Code (its `statusLine` command) or Qwen Code (its
`ui.statusLine`) shows under its prompt, from the ledger. It reads the agent's JSON on standard
input and prints one line: an agent shows nothing for a command that fails, so a ledger it
cannot read is said in the line.

The agent runs it after every message, so `tracehouse statusline` with no other options than
these starts without typer (`cli/entry.py`); this command is what `--help` and the rest see."""

from __future__ import annotations

from typing import Annotated

import typer

from tracehouse.cli.common import Context, command

AgentOpt = Annotated[
    str,
    typer.Option(
        "--agent",
        help="The agent running it: claude-code or qwen-code (those whose status line runs a"
        " command with the session's id).",
    ),
]


@command
def statusline(ctx: Context, agent: AgentOpt = "claude-code") -> None:
    """One line for an agent's status line: today's cost across every agent, the active 5-hour
    block (Claude Code's) and this session's tokens (docs/usage.md shows the settings)."""
    from tracehouse.cli.entry import agent_document
    from tracehouse.reports.statusline_answer import answer

    typer.echo(answer(ctx.settings, agent, agent_document()))
