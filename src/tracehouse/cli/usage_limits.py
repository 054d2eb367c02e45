"""`tracehouse usage limits`: each limit of the config against its period's spend; and the
warning a sync prints when one is crossed."""

from __future__ import annotations

from tracehouse.cli.common import Context
from tracehouse.reports.limits import standings
from tracehouse.reports.price_memo import remembered_prices
from tracehouse.reports.pricing import Prices, own_prices_file
from tracehouse.store.location import GATEWAY_SCHEMES
from tracehouse.store.protocol import SessionStore


def show_limits(ctx: Context, prices: Prices) -> None:
    limits = ctx.settings.limits
    found = ctx.read(lambda ledger: standings(ledger, limits, prices)) if limits else []
    if ctx.json:
        ctx.print_json({"prices": prices.source, "limits": [s.to_json() for s in found]})
        return
    if not found:
        ctx.err.print("no limits set: add [[limits]] tables to the config (docs/usage.md)")
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for name, justify in (("limit", "left"), ("per", "left"), ("since", "left"),
                          ("spent", "right"), ("of", "right"), ("used", "right"),
                          ("", "left")):  # fmt: skip
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for s in found:
        spent, cap = s.amounts()
        table.add_row(s.limit.scope, s.limit.per, s.since.strftime("%Y-%m-%d"), spent, cap,
                      f"{s.used:.0%}", "crossed" if s.crossed else "")  # fmt: skip
    ctx.out.print(table)
    ctx.out.print(f"cost at API list prices ({prices.source}), in local time", style="dim")


def warn_crossed(ctx: Context, ledger: SessionStore) -> None:
    """After a sync that stored something: one line per limit now crossed (stderr). A push to a
    gateway is not read back here: the team's limits are the gateway's to tell."""
    if not ctx.settings.limits or ctx.quiet or ctx.settings.store.startswith(GATEWAY_SCHEMES):
        return
    prices = remembered_prices(own_prices_file())
    for s in standings(ledger, ctx.settings.limits, prices):
        if s.crossed:
            ctx.err.print(f"tracehouse: limit crossed: {s.line()}")
    prices.save()

