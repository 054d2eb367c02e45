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

from tracehouse import validate
from tracehouse.errors import ConfigError
from tracehouse.reports.filters import build_session_filters
from tracehouse.reports.pricing import Prices
from tracehouse.reports.usage import usage
from tracehouse.store.protocol import SessionStore

PERIODS = ("day", "week", "month")
KEYS = {"cost", "tokens", "per", "provider", "model", "project"}


@dataclass(frozen=True)
class Limit:
    per: str
    cost: float | None = None
    tokens: int | None = None
    provider: str | None = None
    model: str | None = None
    project: str | None = None

    @property
    def scope(self) -> str:
        parts = [p for p in (self.provider, self.model, self.project) if p]
        return " · ".join(parts) or "everything"


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


def parse_limits(value: Any) -> tuple[Limit, ...]:
    """The config's `limits`: a list of tables (a JSON list in the environment); limits read
    before (settings validated again with a command's flags) as they are."""
    if isinstance(value, tuple) and all(isinstance(v, Limit) for v in value):
        return value
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("expected a JSON list of limits") from None
    if not isinstance(value, list):
        raise ValueError("expected a list of [[limits]] tables")
    return tuple(_limit(n, entry) for n, entry in enumerate(value, 1))


def _limit(n: int, entry: Any) -> Limit:
    where = f"limit {n}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a table")
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KEYS))})")
    per = entry.get("per", "day")
    if per not in PERIODS:
        raise ValueError(f"{where}: per {per!r}: one of {', '.join(PERIODS)}")
    cost, tokens = entry.get("cost"), entry.get("tokens")
    if (cost is None) == (tokens is None):
        raise ValueError(f"{where}: give cost (US dollars) or tokens, one of them")
    if cost is not None and not _positive(cost, float):
        raise ValueError(f"{where}: cost {cost!r}: a number of dollars above 0")
    if tokens is not None and not _positive(tokens, int):
        raise ValueError(f"{where}: tokens {tokens!r}: a whole number above 0")
    names = {k: entry.get(k) for k in ("provider", "model", "project")}
    for key, name in names.items():
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"{where}: {key} {name!r}: a non-empty name")
    if names["provider"]:
        try:
            validate.provider(names["provider"])
        except ConfigError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return Limit(per, None if cost is None else float(cost), tokens, **names)


def _positive(value: Any, kind: type) -> bool:
    allowed = (int, float) if kind is float else (int,)
    return isinstance(value, allowed) and not isinstance(value, bool) and value > 0


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
