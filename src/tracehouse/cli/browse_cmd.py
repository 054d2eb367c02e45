"""`tracehouse browse`: the ledger in the terminal (`tui/browse.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tracehouse.cli.common import Context, command
from tracehouse.cli.filter_opts import ProjectOpt, ProvidersOpt, SinceOpt, UntilOpt
from tracehouse.errors import ConfigError

if TYPE_CHECKING:
    from tracehouse.tui.readers import Reader


@command
def browse(
    ctx: Context,
    provider: ProvidersOpt = None,
    project: ProjectOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    theme: Annotated[
        str | None,
        typer.Option("--theme", show_default=False,
                     help="Colours: a Textual theme, e.g. textual-light, textual-dark or"
                          " ansi-light (ctrl+p lists them all)."),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option("--token-file", show_default=False,
                     help="With a gateway as --store: the file holding a read token."),
    ] = None,
) -> None:  # fmt: skip
    """Browse the sessions in the terminal (those the filters keep; `s` changes their order):
    search as you type, read a transcript beside the list, walk to a session's subagents and
    threads, and keys to resume, copy a label, export or open a session in the browser. On
    this machine's ledger or a gateway's."""
    from tracehouse.reports.filters import build_session_filters
    from tracehouse.tui.readers import Listing

    # checked here, and the times made UTC here, so a gateway reads them as this machine meant
    chosen = build_session_filters(providers=provider or (), project=project, since=since,
                                   until=until)  # fmt: skip
    listing = Listing(chosen.providers, chosen.project, chosen.since, chosen.until)
    if theme is not None:
        from textual.theme import BUILTIN_THEMES

        if theme not in BUILTIN_THEMES:
            raise ConfigError(f"--theme {theme!r}: one of {', '.join(BUILTIN_THEMES)}")
    from tracehouse.store.location import parse_store
    from tracehouse.tui.browse import Browse

    where = parse_store(ctx.settings.store)
    reader: Reader
    if where.backend == "gateway":
        from tracehouse.store.remote.store import gateway_address
        from tracehouse.tui.readers import GatewayReader

        ctx.pushing_with(token_file)
        address = gateway_address(where.target, ctx.settings.token_file, ctx.settings.machine)
        reader = GatewayReader(address)
    else:
        from tracehouse.redaction import redactor_for
        from tracehouse.search.embedders import Lazy
        from tracehouse.tui.readers import LedgerReader

        if token_file is not None:
            raise ConfigError("--token-file: only with a gateway as --store")
        settings = ctx.settings
        reader = LedgerReader(ctx.store(create=False), where.shown, Lazy(settings.embeddings),
                              lambda: redactor_for(settings))  # fmt: skip
    try:
        Browse(reader, ctx.settings.store, theme, listing).run()
    finally:
        reader.close()
