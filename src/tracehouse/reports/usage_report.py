"""A usage report made of the ledger's sums: the turns' tokens summed by model, agent and quarter
hour (or day, or whatever else a period groups by), put in the period's buckets and priced.

Pure, and light to import: `reports/usage.py` reads the sums from a store, and `tracehouse
usage` answers from the rollup alone before the settings and the store are loaded
(`reports/usage_quick.py`). So its records are classes of their own rather than dataclasses,
whose import (`inspect` with it) took 30 ms of that path, as long as its report.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tracehouse.model.tokens import Tokens, tokens_of
from tracehouse.timespec import parse_stored

TYPE_CHECKING = False  # typing costs the quick path more than the report
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    # What tokens of a model cost at a time (a stored time; its UTC day is what counts), in US
    # dollars; None where the model has no price.
    CostOf = Callable[[str | None, Tokens, str | None], float | None]

PERIODS = ("daily", "weekly", "monthly", "session", "project", "model", "machine")
UNKNOWN = "(unknown)"
# The periods whose groups are quarter hours (or days) of a model and provider: what the
# SQLite store's rollup of the turns holds (`store/sqlite/usage_slots.py`).
ROLLED = ("daily", "weekly", "monthly", "model")


class Line:
    """One row of a report: a bucket (and, broken down, a model) of one provider, summed."""

    __slots__ = ("cost", "key", "model", "models", "provider", "tokens", "turns", "unpriced")

    def __init__(self, key: str, provider: str, model: str | None = None) -> None:
        self.key = key
        self.provider = provider
        self.model = model  # set on breakdown rows
        self.tokens = Tokens()
        self.cost = 0.0  # of the priced tokens
        self.unpriced = 0  # tokens of models without a price: the cost leaves them out
        self.turns = 0
        self.models: set[str] = set()

    def add(self, model: str, tokens: Tokens, cost: float | None, turns: int = 1) -> None:
        self.tokens += tokens
        self.turns += turns
        self.models.add(model)
        if cost is None:
            self.unpriced += tokens.total
        else:
            self.cost += cost

    @property
    def known_cost(self) -> float | None:
        """The cost, or None when no token of it has a price."""
        if self.unpriced and not self.cost:
            return None
        return self.cost

    def to_json(self) -> dict[str, Any]:
        t = self.tokens
        return {
            "key": self.key,
            "provider": self.provider,
            **({"model": self.model} if self.model is not None else {}),
            "models": sorted(self.models),
            "turns": self.turns,
            "freshInputTokens": t.fresh,
            "inputTokens": t.input,
            "outputTokens": t.output,
            "cacheReadTokens": t.cache_read,
            "cacheWriteTokens": t.cache_write,
            "reasoningTokens": t.reasoning,
            "totalTokens": t.total,
            "cost": None if self.known_cost is None else round(self.known_cost, 6),
            "unpricedTokens": self.unpriced,
        }


class Report:
    """A report's lines in bucket order (a bucket's breakdown rows follow it), their total,
    where the prices came from, and the tokens of each model without one, largest first."""

    __slots__ = ("lines", "period", "prices", "total", "unpriced", "utc")

    def __init__(self, period: str, lines: list[Line], total: Line, prices: str, utc: bool,
                 unpriced: dict[str, int]) -> None:  # fmt: skip
        self.period = period
        self.lines = lines
        self.total = total
        self.prices = prices
        self.utc = utc
        self.unpriced = unpriced

    def to_json(self) -> dict[str, Any]:
        return {
            "period": self.period,
            "timeZone": "UTC" if self.utc else "local",
            "prices": self.prices,
            "unpricedModels": [{"model": m, "tokens": n} for m, n in self.unpriced.items()],
            "rows": [line.to_json() for line in self.lines],
            "total": self.total.to_json(),
        }


def report_of(
    rows: Iterable[Mapping[str, Any]],
    period: str,
    cost_of: CostOf,
    source: str,
    *,
    breakdown: bool = False,
    utc: bool = False,
) -> Report:
    """The report of `period` from sums of turns: each row a group's `turns`, its counts under
    the ledger's column names, its `source_provider`, `model`, first time `at`, and what else the
    period groups by (`label`, `project` and `workspace_path`, `host`); `source` names the
    prices."""
    buckets: dict[tuple[str, str], Line] = {}
    models: dict[tuple[str, str], dict[str, Line]] = {}
    total = Line("total", "all")
    unpriced: dict[str, int] = {}
    keys: dict[str, str] = {}  # a time's bucket: many rows share a quarter hour
    for row in rows:
        model = row["model"] or UNKNOWN
        tokens = tokens_of(row)
        turns = int(row["turns"])
        cost = cost_of(row["model"], tokens, row["at"])
        key = _key(period, row, model, utc, keys)
        bucket = buckets.setdefault(
            (key, row["source_provider"]), Line(key, row["source_provider"])
        )
        bucket.add(model, tokens, cost, turns)
        total.add(model, tokens, cost, turns)
        if cost is None:
            unpriced[model] = unpriced.get(model, 0) + tokens.total
        if breakdown:
            parts = models.setdefault((key, row["source_provider"]), {})
            part = parts.setdefault(model, Line(key, row["source_provider"], model))
            part.add(model, tokens, cost, turns)
    lines: list[Line] = []
    for (key, provider), line in sorted(buckets.items(), key=_order(period)):
        if not line.tokens.total:  # sessions whose agent wrote no token counts (Cursor, mostly)
            continue
        lines.append(line)
        if breakdown:
            shown = [m for m in models.get((key, provider), {}).values() if m.tokens.total]
            lines.extend(sorted(shown, key=lambda m: -m.tokens.total))
    by_size = dict(sorted(unpriced.items(), key=lambda kv: (-kv[1], kv[0])))
    return Report(period, lines, total, source, utc, by_size)


def _key(period: str, row: Mapping[str, Any], model: str, utc: bool, keys: dict[str, str]) -> str:
    if period == "session":
        return str(row["label"])
    if period == "project":
        return str(row["project"] or row["workspace_path"] or UNKNOWN)
    if period == "model":
        return model
    if period == "machine":  # the machine a session was imported on, or pushed from
        return str(row["host"] or UNKNOWN)
    at = row["at"]
    if at not in keys:
        keys[at] = _bucket(period, parse_stored(at, utc=utc))
    return keys[at]


def _bucket(period: str, moment: datetime | None) -> str:
    """The day, week or month a time is in."""
    if moment is None:
        return UNKNOWN
    if period == "daily":
        return moment.strftime("%Y-%m-%d")
    if period == "monthly":
        return moment.strftime("%Y-%m")
    monday = moment.date() - timedelta(days=moment.weekday())
    return f"{monday.isoformat()} (W{moment.isocalendar().week:02d})"


def _order(period: str) -> Any:
    """Times in order; sessions, projects and models by their tokens, largest first."""
    if period in ("daily", "weekly", "monthly"):
        return lambda item: (item[0][0] == UNKNOWN, item[0])
    return lambda item: (-item[1].tokens.total, item[0])
