"""`tracehouse usage blocks [--live]`: the 5-hour blocks, as a table, with the active ones' burn
rate and projection; `--live` redraws it from the ledger while `sync live` fills it."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tracehouse.cli.common import Context
from tracehouse.cli.filter_opts import session_filters
from tracehouse.humanize import hours_minutes
from tracehouse.reports.blocks import Block, blocks
from tracehouse.reports.pricing import Prices
from tracehouse.store.protocol import SessionStore
from tracehouse.timespec import parse_stored

if TYPE_CHECKING:
    from rich.console import Group

REDRAW_SECONDS = 3.0
COLUMNS = ("input", "cache write", "cache read", "output", "total", "cost")


def show_blocks(ctx: Context, prices: Prices, live: bool, filters: dict[str, Any]) -> None:
    def read(ledger: SessionStore) -> list[Block]:
        return blocks(ledger, session_filters(ledger, **filters), prices)

    utc = bool(filters.get("utc"))
    if ctx.json:
        now = datetime.now(UTC)
        ctx.print_json(
            {"prices": prices.source, "blocks": [b.to_json(now) for b in ctx.read(read)]}
        )
        return
    if not live:
        ctx.out.print(_view(ctx.read(read), prices, utc, datetime.now(UTC)))
        return
    from rich.live import Live

    with Live(console=ctx.out, auto_refresh=False) as shown:
        try:
            while True:
                shown.update(_view(ctx.read(read), prices, utc, datetime.now(UTC)), refresh=True)
                time.sleep(REDRAW_SECONDS)
        except KeyboardInterrupt:
            pass


def _view(found: list[Block], prices: Prices, utc: bool, now: datetime) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False)
    for name in ("block", "provider", "turns", "span"):
        table.add_column(name, no_wrap=True, justify="right" if name == "turns" else "left")
    for name in COLUMNS:
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("models", overflow="ellipsis", max_width=40, no_wrap=True)
    for block in found:
        t = block.tokens
        counts = (t.fresh, t.cache_write, t.cache_read, t.output, t.total)
        table.add_row(
            _local(block.start, utc), block.provider, f"{block.turns:,}", _span(block, now),
            *(f"{n:,}" for n in counts), _cost(block), ", ".join(sorted(block.models)),
        )  # fmt: skip
    notes = [Text(f"{len(found)} blocks of 5 hours, each from the hour of its first turn;"
                  f" cost at API list prices ({prices.source})", style="dim")]  # fmt: skip
    for block in (b for b in found if b.active(now)):
        tokens, cost = block.projected(now)
        notes.append(Text(
            f"active {block.provider} block since {_local(block.start, utc)[11:]}:"
            f" {hours_minutes(now - block.start)} in, {hours_minutes(block.end - now)} left ·"
            f" {block.burn_rate():,.0f} tokens/min · projected {tokens:,} tokens, ${cost:,.2f}"
        ))  # fmt: skip
    if not found:
        notes = [Text("no turns with token counts match these filters")]
    return Group(table, *notes) if found else Group(*notes)


def _span(block: Block, now: datetime) -> str:
    if block.active(now):
        return f"active, {hours_minutes(block.end - now)} left"
    return hours_minutes(block.last - block.first)


def _cost(block: Block) -> str:
    if block.unpriced and not block.cost:
        return "—"
    return f"${block.cost:,.2f}" + ("*" if block.unpriced else "")


def _local(at: datetime, utc: bool) -> str:
    moment = parse_stored(at.isoformat(), utc=utc)
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ""

