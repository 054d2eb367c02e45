"""Spending limits across agents: what the user set in the config (`[[limits]]`), and what the
ledger says was spent against each in its current day, week or month.

    [[limits]]
    cost = 20.0              # US dollars at API list prices; or tokens = 5_000_000
    per = "day"              # day, week (from Monday) or month, in the local time zone
    provider = "claude-code" # optional: one agent
    model = "claude-opus"    # optional: a model or its beginning
    project = "api"          # optional: a project or workspace path, its beginning

A limit without `provider`, `model` or `project` is on everything together. The spend is the
usage report's for the same filters and period (`usage.py`): tokens in the report's total,
cost at the same prices, so `usage` and `usage limits` never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tracehouse.config import Limit
from tracehouse.errors import ConfigError
from tracehouse.reports.filters import build_session_filters
from tracehouse.reports.pricing import Prices
from tracehouse.reports.usage import usage
from tracehouse.store.protocol import SessionStore


@dataclass(frozen=True)
class Standing:
    limit: Limit
    since: datetime  # the period's start, local
    cost: float
    tokens: int

    @property
    def used(self) -> float:
        """The share of the limit spent (1.0: all of it)."""
        if self.limit.cost is not None:
            return self.cost / self.limit.cost if self.limit.cost else float("inf")
        assert self.limit.tokens is not None
        return self.tokens / self.limit.tokens if self.limit.tokens else float("inf")

    @property
    def crossed(self) -> bool:
        return self.used >= 1.0

    def amounts(self) -> tuple[str, str]:
        """What was spent and the limit, as people read them."""
        if self.limit.cost is not None:
            return f"${self.cost:,.2f}", f"${self.limit.cost:,.2f}"
        return f"{self.tokens:,}", f"{self.limit.tokens:,} tokens"

    def line(self) -> str:
        spent, cap = self.amounts()
        return f"{self.limit.scope}: {spent} of {cap} this {self.limit.per} ({self.used:.0%})"

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": self.limit.scope,
            "per": self.limit.per,
            "provider": self.limit.provider,
            "model": self.limit.model,
            "project": self.limit.project,
            "since": self.since.isoformat(),
            "limitCost": self.limit.cost,
            "limitTokens": self.limit.tokens,
            "cost": round(self.cost, 6),
            "tokens": self.tokens,
            "used": round(self.used, 4),
            "crossed": self.crossed,
        }


def standings(
    store: SessionStore, limits: Sequence[Limit], prices: Prices, now: datetime | None = None
) -> list[Standing]:
    """Each limit with what its current period has spent (local time)."""
    now = now or datetime.now().astimezone()
    out = []
    for limit in limits:
        since = period_start(limit.per, now)
        try:
            filters = build_session_filters(
                providers=(limit.provider,) if limit.provider else (),
                models=(limit.model,) if limit.model else (),
                project=limit.project,
                since=since.astimezone(UTC).isoformat(),
                store=store,
            )
        except ConfigError as exc:
            raise ConfigError(f"limits ({limit.scope}): {exc}") from None
        total = usage(store, "daily", filters, prices).total
        out.append(Standing(limit, since, total.cost, total.tokens.total))
    return out


def period_start(per: str, now: datetime) -> datetime:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if per == "week":
        return day - timedelta(days=day.weekday())
    if per == "month":
        return day.replace(day=1)
    return day
