"""`tracehouse usage [PERIOD]`: tokens and cost by day (the default), week, month, session,
project, model or machine, and the 5-hour blocks (`usage blocks`, `--live`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tracehouse.cli.common import Context, command
from tracehouse.cli.filter_opts import (
    LabelOpt,
    ModelOpt,
    ProjectOpt,
    ProvidersOpt,
    SinceOpt,
    SubagentsOpt,
    UntilOpt,
    UtcOpt,
    session_filters,
)
from tracehouse.errors import ConfigError
from tracehouse.reports.price_memo import PriceMemo, remembered_prices
from tracehouse.reports.pricing import own_prices_file
from tracehouse.reports.settled import remember
from tracehouse.reports.usage import PERIODS, Report, usage
from tracehouse.store.protocol import SessionStore


@command
def usage_report(
    ctx: Context,
    period: Annotated[
        str,
        typer.Argument(help=" | ".join((*PERIODS, "blocks", "limits")) + " (default: daily)"),
    ] = "daily",
    provider: ProvidersOpt = None,
    project: ProjectOpt = None,
    model: ModelOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    subagents: SubagentsOpt = True,
    label: LabelOpt = None,
    utc: UtcOpt = False,
    breakdown: Annotated[
        bool, typer.Option("--breakdown", help="A row per model under each row.")
    ] = False,
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="A price file (TOML) over the genai-prices dataset; default:"
            " prices.toml beside the config file.",
            show_default=False,
        ),
    ] = None,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="blocks: redraw every few seconds from the ledger (as"
            " `sync live` fills it) until Ctrl-C.",
        ),
    ] = False,
) -> None:
    """Input, cache and output tokens with their cost at API list prices, per day by default;
    `usage blocks` shows the 5-hour windows subscriptions are metered in, `usage limits` the
    config's limits against what was spent."""
    if live and period != "blocks":
        raise ConfigError("--live: only with `usage blocks`")
    table = remembered_prices(prices or own_prices_file())
    try:
        _report(ctx, period, table, live, breakdown, prices is None, dict(
            provider=provider, project=project, model=model, since=since, until=until,
            subagents=subagents, label=label, utc=utc,
        ))  # fmt: skip
    finally:
        table.save()  # the prices looked up, for the next report


def _report(
    ctx: Context,
    period: str,
    table: PriceMemo,
    live: bool,
    breakdown: bool,
    own_prices: bool,
    filters: dict[str, Any],
) -> None:
    if period == "limits":
        from tracehouse.cli.usage_limits import show_limits

        show_limits(ctx, table)
        return
    if period == "blocks":
        from tracehouse.cli.usage_blocks import show_blocks

        show_blocks(ctx, table, live, filters)
        return
    utc = bool(filters["utc"])

    def read(ledger: SessionStore) -> Report:
        report = usage(ledger, period, session_filters(ledger, **filters), table,
                       breakdown=breakdown, utc=utc)  # fmt: skip
        if own_prices and ledger.backend == "sqlite":  # what the next run's quick path reads
            remember(ctx.settings, ledger.query, table.binding, own_prices_file(), ctx.flags)
        return report

    report = ctx.read(read)
    if ctx.json:
        ctx.print_json(report.to_json())
        return
    from tracehouse.cli.usage_text import write

    write(report)
