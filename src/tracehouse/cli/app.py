"""The `tracehouse` command: a thin layer of typer commands over the library."""

from __future__ import annotations

import typer

from tracehouse.cli import (
    import_cmd,
    rejects_cmd,
    search_cmd,
    sessions_cmds,
    store_cmds,
    sync_cmds,
)

app = typer.Typer(
    name="tracehouse",
    help="One durable ledger of every AI coding-agent session.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(sync_cmds.app, name="sync")
app.add_typer(sessions_cmds.app, name="sessions")
app.add_typer(store_cmds.app, name="store")
app.command("import")(import_cmd.import_request)
app.command("search")(search_cmd.search)
app.command("rejects")(rejects_cmd.rejects)


def main() -> None:
    app()
