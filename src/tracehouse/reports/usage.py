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
from typing import Any

from tracehouse.errors import ConfigError
from tracehouse.model.turn_time import (
    MODEL,
    WHEN,
    on_a_quarter,
    quarter_hour,
    rollup_sums,
    rollup_window,
)
from tracehouse.reports.filters import SessionFilters, session_sql
from tracehouse.reports.pricing import Prices
from tracehouse.reports.turn_rules import TOKEN_SUMS
from tracehouse.reports.usage_report import PERIODS, ROLLED, UNKNOWN, Line, Report, report_of
from tracehouse.store.protocol import SessionStore
from tracehouse.store.sqlite import usage_slots

__all__ = ["PERIODS", "ROLLED", "UNKNOWN", "Line", "Report", "turn_sql", "usage"]


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
    rows = _sums(store, filters, period)
    return report_of(rows, period, prices.cost, prices.source, breakdown=breakdown, utc=utc)


# What a period groups by besides the time, the model and the provider.
GROUPED = {"session": ("s.label",), "project": ("s.project", "s.workspace_path"),
           "machine": ("s.host",)}  # fmt: skip


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
    return all(at is None or on_a_quarter(at) for at in (filters.since, filters.until))


def _slot_sums(store: SessionStore, filters: SessionFilters) -> list[dict[str, Any]]:
    """`_sums` from the rollup: its quarter hour is `at`, which prices and buckets it as the
    first of its turns would."""
    kept = SessionFilters(providers=filters.providers, models=filters.models,
                          subagents=filters.subagents)  # fmt: skip
    where, params = session_sql(kept, "u", times=False, model="u.model")
    window, bounds = rollup_window(filters.since, filters.until)
    return store.query(rollup_sums(where + window), params + bounds)
