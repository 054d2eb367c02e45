"""A turn's model and time as SQL over `turns t JOIN sessions s`, the quarter hour its tokens
are summed in, and the rollup of those sums: what the usage reports (`reports/`) and the SQLite
store, which keeps the rollup (`store/sqlite/usage_slots.py`), agree on. Nothing is imported
here: the quick paths of the status line and of `usage` read it before anything heavier loads.

A turn's model and time are its own, else its session's. A quarter hour of UTC is the finest
time a report needs: every time zone's offset is a whole number of quarter hours, so a turn's
local day, week or month is its quarter hour's, and a price depends on the UTC day alone.
"""

from __future__ import annotations

MODEL = "coalesce(t.model, s.model)"
WHEN = "coalesce(t.started_at, s.created_at)"


def quarter_hour(at: str) -> str:
    """SQL for the quarter hour a stored time `at` (`2026-12-07T01:41:13.484Z`) falls in, as the
    time it begins (`2026-12-07T01:30:00.000Z`): NULL where `at` is."""
    quarter = f"CAST(substr({at}, 15, 2) AS INTEGER) / 15"  # SQL both stores speak
    minute = f"CASE {quarter} WHEN 0 THEN '00' WHEN 1 THEN '15' WHEN 2 THEN '30' ELSE '45' END"
    return f"substr({at}, 1, 14) || {minute} || ':00.000Z'"


# The rollup: the turns' tokens and count by quarter hour, agent, model ('' for none) and
# whether the session is a subagent's.
ROLLUP = "usage_slots"
ROLLUP_KEY = ("slot", "source_provider", "model", "is_subagent")
ROLLUP_SUMS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens",
               "reasoning_tokens")  # fmt: skip


def rollup_sums(where: str = "") -> str:
    """SQL for the rollup `u` summed by quarter hour (`at`), model and agent, as a report sums
    the turns themselves, for the rows that `where` (` AND …`) keeps."""
    sums = ", ".join(f"sum(u.{c}) AS {c}" for c in ROLLUP_SUMS)
    return (
        "SELECT nullif(u.slot, '') AS at, nullif(u.model, '') AS model, u.source_provider,"
        f" sum(u.turns) AS turns, {sums} FROM {ROLLUP} u WHERE u.turns > 0{where}"
        " GROUP BY u.slot, u.model, u.source_provider"
    )


def rollup_window(since: str | None, until: str | None) -> tuple[str, list[str]]:
    """The rollup's rows in a window of stored times (` AND …` for `rollup_sums`, and its
    values): a quarter hour is in it when it begins in it, which is its turns' window when both
    ends are quarter hours (`on_a_quarter`); a turn without a time is in no window."""
    where, params = "", []
    if since:
        where += " AND u.slot >= ?"
        params.append(since)
    if until:  # '' sorts first
        where += " AND u.slot <> '' AND u.slot < ?"
        params.append(until)
    return where, params


def on_a_quarter(at: str) -> bool:
    """Whether a stored time is the start of a quarter hour (a day of every time zone is)."""
    return at[14:16] in ("00", "15", "30", "45") and at[16:] == ":00.000Z"
