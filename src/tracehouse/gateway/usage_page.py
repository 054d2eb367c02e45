"""`/usage`: tokens and cost per day, model, project and machine, charted on the server as SVG
(`reports/charts.py`) with the same figures as tables, under the session list's filters. The
numbers are `tracehouse usage`'s (`GET /v1/usage` returns its `--json`)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from tracehouse.errors import TracehouseError
from tracehouse.gateway.deps import Ledger
from tracehouse.gateway.pages import Filters, filter_values, render_page, signed_in
from tracehouse.gateway.views import list_prices
from tracehouse.humanize import hours_minutes
from tracehouse.model.tables import PROVIDERS
from tracehouse.reports import charts
from tracehouse.reports.blocks import Block, blocks
from tracehouse.reports.limits import Standing, standings
from tracehouse.reports.usage import usage
from tracehouse.timespec import local_time

router = APIRouter(include_in_schema=False)
BLOCKS_SHOWN = 12  # the latest 5-hour blocks, newest first
GROUPS = (("model", "Tokens and cost by model"), ("project", "Tokens and cost by project"),
          ("machine", "Tokens and cost by machine"))  # fmt: skip


@router.get("/usage", response_model=None)
def usage_page(request: Request, store: Ledger, shown: Filters) -> HTMLResponse | RedirectResponse:
    if not signed_in(request, store):
        return RedirectResponse("/login", status_code=303)
    sections: list[dict[str, Any]] = []
    block_rows: list[dict[str, Any]] = []
    limit_rows: list[dict[str, Any]] = []
    total = unpriced = None
    error = None
    try:
        filters = shown.of(store)
        daily = usage(store, "daily", filters, list_prices())
        total, unpriced = daily.total, daily.unpriced
        days = charts.days(daily.lines)
        sections.append({"title": "Tokens and cost per day (days with usage)",
                         "chart": charts.columns(days, "Tokens per day")
                         + charts.columns(days, "Cost per day", height=120, cost=True),
                         "bars": days, "key": "day"})  # fmt: skip
        now = datetime.now(UTC)
        recent = blocks(store, filters, list_prices())[-BLOCKS_SHOWN:]
        block_rows = [{"start": local_time(b.start.isoformat()), "provider": b.provider,
                       "turns": b.turns, "tokens": b.tokens.total,
                       "cost": None if b.unpriced and not b.cost else b.cost,
                       "left": _left(b, now)} for b in reversed(recent)]  # fmt: skip
        limit_rows = [_limit_row(s) for s in standings(
            store, request.app.state.config.limits, list_prices())]  # fmt: skip
        for period, title in GROUPS:
            found = charts.bars(usage(store, period, filters, list_prices()).lines)
            sections.append({"title": title, "chart": charts.rows(found, title), "bars": found,
                             "key": period})  # fmt: skip
    except TracehouseError as exc:
        error = str(exc)
    return render_page("usage.html.j2", sections=sections, blocks=block_rows, limits=limit_rows,
                       total=total, unpriced=unpriced, prices=list_prices().source, error=error,
                       providers=PROVIDERS, machines=filter_values(store, "host"),
                       **asdict(shown))  # fmt: skip


def _left(block: Block, now: datetime) -> str:
    if not block.active(now):
        return ""
    return f"active, {hours_minutes(block.end - now)} left"


def _limit_row(standing: Standing) -> dict[str, Any]:
    """A team limit as the page shows it: the whole team's spend, whatever the page's filters."""
    spent, cap = standing.amounts()
    return {"scope": standing.limit.scope, "per": standing.limit.per,
            "since": standing.since.strftime("%Y-%m-%d"), "spent": spent, "cap": cap,
            "used": f"{standing.used:.0%}", "crossed": standing.crossed}  # fmt: skip
