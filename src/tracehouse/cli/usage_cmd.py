"""`tracehouse usage PERIOD`: tokens and cost by day, week, month, session, project, model or
machine."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
from tracehouse.reports.pricing import load_prices, own_prices_file
from tracehouse.reports.usage import PERIODS, Line, Report, usage
from tracehouse.sinks.protocol import SessionStore

if TYPE_CHECKING:
    from rich.table import Table

COLUMNS = ("input", "output", "cache read", "cache write", "reasoning", "total", "cost")


@command
def usage_report(
    ctx: Context,
    period: Annotated[str, typer.Argument(help=" | ".join(PERIODS), show_default=False)],
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
) -> None:
    """Input, output, cache and reasoning tokens with their cost at API list prices."""
    table = load_prices(prices or own_prices_file())

    def read(ledger: SessionStore) -> Report:
        found = session_filters(
            ledger, provider=provider, project=project, model=model, since=since, until=until,
            subagents=subagents, label=label, utc=utc,
        )  # fmt: skip
        return usage(ledger, period, found, table, breakdown=breakdown, utc=utc)

    report = ctx.read(read)
    if ctx.json:
        ctx.print_json(report.to_json())
        return
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
    total = _cells(report.total)
    for name, footer in zip(COLUMNS, total, strict=True):
        table.add_column(name, justify="right", footer=footer, no_wrap=True)
    for line in report.lines:
        if line.model is not None:
            table.add_row(f"  └ {line.model}", "", *_cells(line), style="dim")
        else:
            table.add_row(line.key, line.provider, *_cells(line))
    return table


def _cells(line: Line) -> list[str]:
    t = line.tokens
    cost = line.known_cost
    shown = "—" if cost is None else f"${cost:,.2f}" + ("*" if line.unpriced else "")
    counts = (t.input, t.output, t.cache_read, t.cache_write, t.reasoning, t.total)
    return [f"{n:,}" for n in counts] + [shown]
