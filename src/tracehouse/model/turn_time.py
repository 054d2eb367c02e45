"""A turn's model and time as SQL over `turns t JOIN sessions s`, and the quarter hour its tokens
are summed in: what the usage reports (`reports/`) and the SQLite store's usage rollup
(`store/sqlite/usage_slots.py`) agree on. Nothing is imported here: the status line's quick
path reads it before anything heavier loads.

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
