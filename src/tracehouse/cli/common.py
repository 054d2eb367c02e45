"""What every command shares: the common options, the settings they build, one error boundary."""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import orjson
import typer

from tracehouse.config import Settings, load_settings
from tracehouse.errors import TracehouseError
from tracehouse.model.tables import PROVIDERS
from tracehouse.store import SessionStore, open_configured_store

if TYPE_CHECKING:
    from rich.console import Console

StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Ledger: a SQLite file, a postgresql:// DSN, or a gateway's https:// (sync).",
        show_default=False,
    ),
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (TOML).", show_default=False)
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
QuietOpt = Annotated[bool, typer.Option("-q", "--quiet", help="Only errors on stderr.")]
HomeOpt = Annotated[
    Path | None,
    typer.Option(
        "--home", help="Treat DIR as the home whose agent logs are read.", show_default=False
    ),
]
SourceOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--source",
        help="Only this source, e.g. claude-code or claude-code=PATH (repeatable).",
        show_default=False,
    ),
]
TokenFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        help="With a gateway as --store: the file holding the push token.",
        show_default=False,
    ),
]
NoRedactOpt = Annotated[
    bool,
    typer.Option(
        "--no-redact",
        help="Store secrets verbatim (config: redact = false); a gateway refuses such pushes.",
    ),
]
VerboseOpt = Annotated[int, typer.Option("-v", "--verbose", count=True, help="More detail.")]
# Every source the registry reads, for the help of each --provider.
PROVIDER_NAMES = ", ".join(PROVIDERS[:-1]) + " or " + PROVIDERS[-1]
ProviderOpt = Annotated[
    str | None,
    typer.Option("--provider", help=f"{PROVIDER_NAMES}.", show_default=False),
]
LimitOpt = Annotated[int, typer.Option("--limit", help="At most this many, newest first.")]
T = TypeVar("T")


@dataclass
class Context:
    settings: Settings
    json: bool
    quiet: bool
    verbose: int
    # What a printed hint repeats so that it works when copied: the ledger and config this
    # command was given on its command line (a DSN holding a password is never echoed).
    given: tuple[str, ...] = ()
    # `--store` and `--config` as given, for what a quick path keys its kept state by.
    flags: tuple[str | None, str | None] = (None, None)

    @property
    def out(self) -> Console:
        from tracehouse.cli.console import console

        # Piped output keeps whole lines rather than rich's 80-column default.
        terminal = console()
        return terminal if terminal.is_terminal else console(width=160)

    @property
    def err(self) -> Console:
        from tracehouse.cli.console import console

        return console(stderr=True, quiet=self.quiet, soft_wrap=True)

    def pushing_with(self, token_file: Path | None) -> None:
        """`--token-file` given to a sync command: what `store()` then reads the token from."""
        if token_file is not None:
            self.settings = self.settings.with_flags(token_file=str(token_file))

    def verbatim(self, no_redact: bool) -> None:
        """`--no-redact`: secrets are stored as they are, here and in what is pushed."""
        if no_redact:
            self.settings = self.settings.with_flags(redact=False)

    def store(self, *, create: bool = True, migrate: bool = True) -> SessionStore:
        return open_configured_store(self.settings, create=create, migrate=migrate)

    def read(self, query: Callable[[SessionStore], T]) -> T:
        """Run a read against the existing ledger (never created by a read), then close it."""
        ledger = self.store(create=False)
        try:
            return query(ledger)
        finally:
            ledger.close()

    def print_json(self, value: Any) -> None:
        sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


F = TypeVar("F", bound=Callable[..., Any])

# The options every command takes, added to its signature by `command`.
COMMON = (
    ("store", StoreOpt, None),
    ("config", ConfigOpt, None),
    ("json", JsonOpt, False),
    ("quiet", QuietOpt, False),
    ("verbose", VerboseOpt, 0),
)


def command(func: F) -> F:
    """A CLI command: its first argument is the `Context` built from the common options (which
    this adds to the signature typer reads), and user errors become one line on stderr with
    their exit code, never a traceback."""
    signature = inspect.signature(func)
    # Annotations are strings here (postponed evaluation); typer needs the Annotated objects.
    hints = typing.get_type_hints(func, include_extras=True)
    own = [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in list(signature.parameters.values())[1:]  # without the Context
    ]
    common = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
        for name, kind, default in COMMON
    ]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        options = {name: kwargs.pop(name, default) for name, _kind, default in COMMON}
        try:
            ctx = context(**options)
            return func(ctx, *args, **kwargs)
        except TracehouseError as exc:  # its message may quote a ledger's or a user's text
            from tracehouse.shown import escaped

            typer.echo(f"tracehouse: {escaped(str(exc))}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("tracehouse: interrupted", err=True)
            raise typer.Exit(130) from None

    wrapper.__signature__ = signature.replace(parameters=own + common)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def context(
    store: str | None, config: Path | None, json: bool, quiet: bool, verbose: int
) -> Context:
    settings = load_settings(config).with_flags(store=store)
    given: list[str] = []
    if store is not None and not _holds_password(store):
        given += ["--store", store]
    if config is not None:
        given += ["--config", str(config)]
    flags = (store, None if config is None else str(config))
    return Context(settings, json, quiet, verbose, tuple(given), flags)


def _holds_password(location: str) -> bool:
    from urllib.parse import urlsplit

    if "://" not in location:
        return False
    try:
        return urlsplit(location).password is not None
    except ValueError:  # not a URL at all: refused where the store opens; never echoed
        return True
