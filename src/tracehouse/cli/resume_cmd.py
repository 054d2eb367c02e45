"""`tracehouse resume LABEL`: continue a session, in its own agent or in another."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated

import typer

from tracehouse.cli.common import Context, command
from tracehouse.errors import ConfigError
from tracehouse.shown import command_line, escaped_line


@command
def resume(
    ctx: Context,
    ref: Annotated[str, typer.Argument(help="Session label (e.g. cc-6a963594), id or source id.")],
    into: Annotated[
        str | None,
        typer.Option("--in", metavar="AGENT",
                     help="Continue it in this agent (claude-code) rather than its own.",
                     show_default=False),
    ] = None,
    cwd: Annotated[
        Path | None,
        typer.Option("--cwd", help="The workspace to continue in (default: the session's).",
                     show_default=False),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be written.")] = False,
    run: Annotated[
        bool, typer.Option("--exec", help="Then run the agent's resume command in the workspace.")
    ] = False,
) -> None:  # fmt: skip
    """Continue a session: the agent's resume command, after writing the session back where the
    agent looks when the agent no longer has it, or as a new session of another agent."""
    from tracehouse.resume.plan import carry_out, plan

    workspace = str(cwd.expanduser().resolve()) if cwd is not None else None

    def read(ledger):  # type: ignore[no-untyped-def]
        return plan(ledger, ref, target=into, cwd=workspace, home=Path.home(),
                    env=dict(os.environ))  # fmt: skip

    chosen = ctx.read(read)
    shown = command_line(chosen.command, chosen.cwd)
    if run and not dry_run and not os.path.isdir(chosen.cwd):
        raise ConfigError(f"the workspace {escaped_line(chosen.cwd)} is no directory here:"
                          " give --cwd DIR to resume it in")  # fmt: skip
    written = False
    if chosen.action != "present" and not dry_run:
        carry_out(chosen)
        written = True
    if ctx.json:
        ctx.print_json(chosen.to_json(written) | {"shell": shown})
    else:
        if chosen.action == "present" and chosen.path is not None:
            where = escaped_line(str(chosen.path))
            ctx.out.print(f"{chosen.label}: written before, at {where}", soft_wrap=True)
        elif chosen.action == "present":
            ctx.out.print(f"{chosen.label}: {chosen.target} still has it", soft_wrap=True)
        else:
            verb = "would write" if dry_run else "wrote"
            what = (
                "restored" if chosen.action == "restore" else f"from {chosen.source} {chosen.label}"
            )
            left = ", ".join(f"{k} {n}" for k, n in sorted(chosen.left_out.items()))
            counts = f"{chosen.messages} messages, {chosen.tool_calls} tool calls"
            if left:
                counts += f"; left out: {left}"
            where = escaped_line(str(chosen.path))
            ctx.out.print(f"{verb} {where} ({what}: {counts})", soft_wrap=True)
        if shown is None:
            ctx.out.print(f"run: {shlex.join(chosen.command)} in the workspace"
                          f" {escaped_line(chosen.cwd)} (a path no shell line can show safely)",
                          soft_wrap=True)  # fmt: skip
        else:
            ctx.out.print(f"run: {shown}", soft_wrap=True)
    if run and not dry_run:  # the argument list as it is: no shell reads it
        os.chdir(chosen.cwd)
        os.execvp(chosen.command[0], chosen.command)
