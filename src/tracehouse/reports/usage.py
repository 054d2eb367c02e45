"""Token usage and cost by day, week, month, session, project, model or machine, from the ledger's
turns.

The turns are the one place tokens are counted once (DESIGN: a session's totals are the sum of
its turns), so a report is a sum of turns. The database sums them by quarter hour of UTC (every
time zone's offset is a whole number of quarter hours) or by UTC day, with the model and
whatever else the period groups by; Python puts those sums in the buckets, days of the reader's
time zone. A price depends on the model and the UTC day alone and is linear in the tokens, so
each sum is priced exactly as its turns one by one would be, and a report of a large ledger
reads hundreds of rows, not every turn.

Every provider's counts are in the ledger's convention (`model/tokens.py`): a report's input
holds the cache reads and writes it shows apart, its output holds the reasoning, and its total is
input + output, the figures `sessions show` gives for the same turns. A price applies its input
rate to the input no cache served (`Tokens.fresh`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from tracehouse.errors import ConfigError
from tracehouse.model.turn_time import MODEL, WHEN, quarter_hour
from tracehouse.reports.filters import SessionFilters, session_sql
from tracehouse.reports.pricing import Prices, Tokens
from tracehouse.reports.turn_rules import TOKEN_SUMS
from tracehouse.store.protocol import SessionStore
from tracehouse.store.sqlite import usage_slots
from tracehouse.timespec import parse_stored

PERIODS = ("daily", "weekly", "monthly", "session", "project", "model", "machine")
UNKNOWN = "(unknown)"


@dataclass
class Line:
    """One row of a report: a bucket (and, broken down, a model) of one provider."""

    key: str
    provider: str
    model: str | None = None  # set on breakdown rows
    tokens: Tokens = field(default_factory=Tokens)
    cost: float = 0.0  # of the priced tokens
    unpriced: int = 0  # tokens of models without a price: the cost leaves them out
    turns: int = 0
    models: set[str] = field(default_factory=set)

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


@dataclass
class Report:
    period: str
    lines: list[Line]  # bucket order; a bucket's breakdown rows follow it
    total: Line
    prices: str  # where the prices came from
    utc: bool
    unpriced: dict[str, int] = field(default_factory=dict)  # model → tokens, largest first

    def to_json(self) -> dict[str, Any]:
        return {
            "period": self.period,
            "timeZone": "UTC" if self.utc else "local",
            "prices": self.prices,
            "unpricedModels": [{"model": m, "tokens": n} for m, n in self.unpriced.items()],
            "rows": [line.to_json() for line in self.lines],
            "total": self.total.to_json(),
        }


def usage(
    store: SessionStore,
    period: str,
    filters: SessionFilters,
    prices: Prices,
    *,
    breakdown: bool = False,
    utc: bool = False,
) -> Report:
    if period not in PERIODS:
        raise ConfigError(f"usage {period!r}: one of {', '.join(PERIODS)}")
    buckets: dict[tuple[str, str], Line] = {}
    models: dict[tuple[str, str], dict[str, Line]] = {}
    total = Line("total", "all")
    unpriced: dict[str, int] = {}
    for row in _sums(store, filters, period):
        model = row["model"] or UNKNOWN
        tokens = tokens_of(row)
        turns = int(row["turns"])
        cost = prices.cost(row["model"], tokens, row["at"])
        key = _key(period, row, model, utc)
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
    return Report(period, lines, total, prices.source, utc, by_size)


# What a period groups by besides the time, the model and the provider.
GROUPED = {"session": ("s.label",), "project": ("s.project", "s.workspace_path"),
           "machine": ("s.host",)}  # fmt: skip
# The periods whose groups are quarter hours (or days) of a model and provider: what the
# SQLite store's rollup of the turns holds (`store/sqlite/usage_slots.py`).
ROLLED = ("daily", "weekly", "monthly", "model")


def turn_sql(filters: SessionFilters) -> tuple[str, list[Any]]:
    """The filters as SQL over turns `t` of sessions `s`: a turn counts in a time window when it
    began in it (a session's window would take all its turns)."""
    where, params = session_sql(filters, times=False, model=MODEL)
    # `WHEN` spelled out, so that the window is a range of the index on turns.started_at (a
    # turn without a time of its own, rare, is looked up by its session's).
    if filters.since:
        where += " AND (t.started_at >= ? OR t.started_at IS NULL AND s.created_at >= ?)"
        params += [filters.since, filters.since]
    if filters.until:
        where += " AND (t.started_at < ? OR t.started_at IS NULL AND s.created_at < ?)"
        params += [filters.until, filters.until]
    return where, params


def _sums(store: SessionStore, filters: SessionFilters, period: str) -> Iterable[dict[str, Any]]:
    """The turns' tokens summed per group; `at` is the group's first time (its quarter hour or
    its day is every member's)."""
    if period in ROLLED and _rolled(store, filters):
        return _slot_sums(store, filters)
    model, when = MODEL, WHEN
    where, params = turn_sql(filters)
    daily = period in ("daily", "weekly", "monthly")  # else a UTC day, what a price needs
    slot = quarter_hour(when) if daily else f"substr({when}, 1, 10)"
    extra = GROUPED.get(period, ())
    columns = "".join(f", {c}" for c in extra)
    return store.query(
        f"SELECT min({when}) AS at, {model} AS model, s.source_provider{columns},"
        f" count(*) AS turns, {TOKEN_SUMS}"
        f" FROM turns t JOIN sessions s ON s.session_id = t.session_id WHERE 1 = 1{where}"
        f" GROUP BY {slot}, {model}, s.source_provider{columns}",
        params,
    )


def _rolled(store: SessionStore, filters: SessionFilters) -> bool:
    """Whether the store's rollup answers these filters: by agent, model and subagents, in a
    window of whole quarter hours (a day of any time zone is one)."""
    if store.backend != "sqlite" or store.schema_version < usage_slots.SINCE_SCHEMA:
        return False
    if filters.project or filters.session_ids or filters.machines:
        return False
    return all(at is None or _on_a_quarter(at) for at in (filters.since, filters.until))


def _on_a_quarter(at: str) -> bool:
    return at[14:16] in ("00", "15", "30", "45") and at[16:] == ":00.000Z"


def _slot_sums(store: SessionStore, filters: SessionFilters) -> list[dict[str, Any]]:
    """`_sums` from the rollup: its quarter hour is `at`, which prices and buckets it as the
    first of its turns would."""
    kept = SessionFilters(providers=filters.providers, models=filters.models,
                          subagents=filters.subagents)  # fmt: skip
    where, params = session_sql(kept, "u", times=False, model="u.model")
    if filters.since:
        where += " AND u.slot >= ?"
        params.append(filters.since)
    if filters.until:  # a turn without a time is in no window ('' sorts first)
        where += " AND u.slot <> '' AND u.slot < ?"
        params.append(filters.until)
    sums = ", ".join(f"sum(u.{c}) AS {c}" for c in usage_slots.SUMS)
    return store.query(
        "SELECT nullif(u.slot, '') AS at, nullif(u.model, '') AS model, u.source_provider,"
        f" sum(u.turns) AS turns, {sums} FROM {usage_slots.TABLE} u WHERE u.turns > 0{where}"
        " GROUP BY u.slot, u.model, u.source_provider",
        params,
    )


def tokens_of(row: dict[str, Any]) -> Tokens:
    return Tokens(
        input=int(row["input_tokens"] or 0),
        output=int(row["output_tokens"] or 0),
        cache_read=int(row["cached_input_tokens"] or 0),
        cache_write=int(row["cache_write_tokens"] or 0),
        reasoning=int(row["reasoning_tokens"] or 0),
    )


def _key(period: str, row: dict[str, Any], model: str, utc: bool) -> str:
    if period == "session":
        return str(row["label"])
    if period == "project":
        return str(row["project"] or row["workspace_path"] or UNKNOWN)
    if period == "model":
        return model
    if period == "machine":  # the machine a session was imported on, or pushed from
        return str(row["host"] or UNKNOWN)
    moment = parse_stored(row["at"], utc=utc)
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
