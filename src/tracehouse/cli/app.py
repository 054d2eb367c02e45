"""The `tracehouse` command: a thin layer of typer commands over the library."""

from __future__ import annotations

from typing import Annotated

import typer

from tracehouse import __version__
from tracehouse.cli import (
    doctor_cmd,
    export_cmd,
    import_cmd,
    mcp_cmd,
    rejects_cmd,
    resume_cmd,
    runs_cmd,
    search_cmd,
    secrets_cmd,
    serve_cmd,
    sessions_cmds,
    store_cmds,
    sync_cmds,
    usage_cmd,
)
from tracehouse.pipeline import collect_less

app = typer.Typer(
    name="tracehouse",
    help="One durable ledger of every AI coding-agent session.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # typer's own completion: `tracehouse --install-completion` for bash, zsh, fish, PowerShell.
    add_completion=True,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tracehouse {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """One durable ledger of every AI coding-agent session."""


app.add_typer(sync_cmds.app, name="sync")
app.add_typer(sessions_cmds.app, name="sessions")
app.add_typer(store_cmds.app, name="store")
app.add_typer(serve_cmd.app, name="serve")
app.add_typer(secrets_cmd.app, name="secrets")
app.command("import")(import_cmd.import_request)
app.command("search")(search_cmd.search)
app.command("rejects")(rejects_cmd.rejects)
app.command("runs")(runs_cmd.runs)
app.command("doctor")(doctor_cmd.doctor)
app.command("usage")(usage_cmd.usage_report)
app.command("export")(export_cmd.export)
app.command("mcp")(mcp_cmd.mcp)
app.command("resume")(resume_cmd.resume)


def main() -> None:
    collect_less()
    app()


if __name__ == "__main__":  # `python -m tracehouse.cli.app`: what the tests start
    main()
