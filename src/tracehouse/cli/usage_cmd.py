"""`tracehouse usage [PERIOD]`: tokens and cost by day (the default), week, month, session,
project, model or machine, and the 5-hour blocks (`usage blocks`, `--live`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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
from tracehouse.reports.price_memo import remembered_prices
from tracehouse.reports.pricing import Prices, own_prices_file
from tracehouse.reports.usage import PERIODS, Line, Report, usage
from tracehouse.store.protocol import SessionStore

if TYPE_CHECKING:
    from rich.table import Table

# As ccusage users read them: the input no cache served, the cache apart, output with its
# reasoning, and the total of all four, which is the ledger's input + output.
COLUMNS = ("input", "cache write", "cache read", "output", "reasoning", "total", "cost")
CONVENTION = "input: no cache served · output: reasoning included · total: all of them"


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
        _report(ctx, period, table, live, breakdown, dict(
            provider=provider, project=project, model=model, since=since, until=until,
            subagents=subagents, label=label, utc=utc,
        ))  # fmt: skip
    finally:
        table.save()  # the prices looked up, for the next report


def _report(
    ctx: Context, period: str, table: Prices, live: bool, breakdown: bool, filters: dict[str, Any]
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
        return usage(ledger, period, session_filters(ledger, **filters), table,
                     breakdown=breakdown, utc=utc)  # fmt: skip

    report = ctx.read(read)
    if ctx.json:
        ctx.print_json(report.to_json())
        return
    ctx.out.print(CONVENTION, style="dim")
    ctx.out.print(_table(report))
    ctx.out.print(f"cost at API list prices ({report.prices}), each turn at its date", style="dim")
    if report.unpriced:
        models = ", ".join(f"{m} {n:,}" for m, n in report.unpriced.items())
        ctx.out.print(
            f"not in the cost: {report.total.unpriced:,} tokens of models without a price"
            f" ({models}); — : none priced, * : some. Price them in a prices.toml.",
            style="dim",
        )


def _table(report: Report) -> Table:
    from rich.table import Table

    heading = {"daily": "date", "weekly": "week", "monthly": "month"}.get(
        report.period, report.period
    )
    table = Table(box=None, pad_edge=False, show_footer=True)
    table.add_column(heading, footer="total", no_wrap=True)
    table.add_column("provider", no_wrap=True)
    total = cells(report.total)
    for name, footer in zip(COLUMNS, total, strict=True):
        table.add_column(name, justify="right", footer=footer, no_wrap=True)
    for line in report.lines:
        if line.model is not None:
            table.add_row(f"  └ {line.model}", "", *cells(line), style="dim")
        else:
            table.add_row(line.key, line.provider, *cells(line))
    return table


def cells(line: Line) -> list[str]:
    t = line.tokens
    cost = line.known_cost
    shown = "—" if cost is None else f"${cost:,.2f}" + ("*" if line.unpriced else "")
    counts = (t.fresh, t.cache_write, t.cache_read, t.output, t.reasoning, t.total)
    return [f"{n:,}" for n in counts] + [shown]
