"""What every command shares: the common options, the settings they build, one error boundary."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import orjson
import typer
from rich.console import Console

from tracehouse.config import Settings, load_settings
from tracehouse.errors import TracehouseError
from tracehouse.sinks import SessionStore, open_store

StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store", help="Ledger: a SQLite file or a postgresql:// DSN.", show_default=False
    ),
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (TOML).", show_default=False)
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
QuietOpt = Annotated[bool, typer.Option("-q", "--quiet", help="Only errors on stderr.")]
VerboseOpt = Annotated[int, typer.Option("-v", "--verbose", count=True, help="More detail.")]


@dataclass
class Context:
    settings: Settings
    json: bool
    quiet: bool
    verbose: int

    @property
    def out(self) -> Console:
        # Piped output keeps whole lines rather than rich's 80-column default.
        console = Console(highlight=False)
        return console if console.is_terminal else Console(highlight=False, width=160)

    @property
    def err(self) -> Console:
        return Console(stderr=True, highlight=False, quiet=self.quiet, soft_wrap=True)

    def store(self, *, create: bool = True) -> SessionStore:
        return open_store(self.settings.store, create=create)

    def print_json(self, value: Any) -> None:
        sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


def context(
    store: str | None,
    config: Path | None,
    json: bool,
    quiet: bool,
    verbose: int,
    **flags: Any,
) -> Context:
    settings = load_settings(config).with_flags(store=store, **flags)
    return Context(settings, json, quiet, verbose)


F = TypeVar("F", bound=Callable[..., Any])


def handle_errors(func: F) -> F:
    """User errors become one line on stderr and their exit code, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TracehouseError as exc:
            typer.echo(f"tracehouse: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("tracehouse: interrupted", err=True)
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]
