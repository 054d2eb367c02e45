"""The `tracehouse` command: a thin layer of typer commands over the library.

A command's module is imported when the command runs, not for every command: `tracehouse sync
backfill` from cron starts without importing the exports, the gateway or the MCP server's code
(`build`). `app`, with every command, is built on first use (`--help`, tests)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from typing import Annotated, Any

import typer

from tracehouse import __version__
from tracehouse.pipeline import collect_less, one_blas_thread

# name → (module under tracehouse.cli, attribute, whether it is a group of commands)
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "sync": ("sync_cmds", "app", True),
    "sessions": ("sessions_cmds", "app", True),
    "store": ("store_cmds", "app", True),
    "serve": ("serve_cmd", "app", True),
    "secrets": ("secrets_cmd", "app", True),
    "import": ("import_cmd", "import_request", False),
    "search": ("search_cmd", "search", False),
    "index": ("index_cmd", "app", True),
    "open": ("open_cmd", "open_view", False),
    "browse": ("browse_cmd", "browse", False),
    "rejects": ("rejects_cmd", "rejects", False),
    "runs": ("runs_cmd", "runs", False),
    "doctor": ("doctor_cmd", "doctor", False),
    "usage": ("usage_cmd", "usage_report", False),
    "export": ("export_cmd", "export", False),
    "mcp": ("mcp_cmd", "mcp", False),
    "resume": ("resume_cmd", "resume", False),
    "statusline": ("statusline_cmd", "statusline", False),
}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tracehouse {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """One durable ledger of every AI coding-agent session."""


def build(names: Iterable[str] = COMMANDS) -> typer.Typer:
    """The command with these subcommands (all of them by default), in COMMANDS' order."""
    root = typer.Typer(
        name="tracehouse",
        help="One durable ledger of every AI coding-agent session.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        # typer's own completion: `tracehouse --install-completion` for bash, zsh, fish, PowerShell.
        add_completion=True,
    )
    root.callback()(_root)
    wanted = set(names)
    for name, (module, attribute, group) in COMMANDS.items():
        if name not in wanted:
            continue
        found = getattr(importlib.import_module(f"tracehouse.cli.{module}"), attribute)
        if group:
            root.add_typer(found, name=name)
        else:
            root.command(name)(found)
    return root


def __getattr__(name: str) -> Any:
    if name == "app":  # every command: what `--help` lists and the tests drive
        app = build()
        globals()["app"] = app
        return app
    raise AttributeError(name)


def main() -> None:
    collect_less()
    one_blas_thread()
    named = sys.argv[1] if len(sys.argv) > 1 else ""
    if named == "sync":  # the secret-scanning rules load beside the command's imports and plan
        from tracehouse.redaction.detect import prefetch

        prefetch()
    # A command named first needs only its own module; anything else (`--help`, `--version`,
    # a mistyped name, shell completion) gets them all.
    build([named] if named in COMMANDS else COMMANDS)()


if __name__ == "__main__":  # `python -m tracehouse.cli.app`: what the tests start
    main()
