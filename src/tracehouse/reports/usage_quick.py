"""`tracehouse usage` answered from the rollup alone, before the settings, the store and the
price table load (a full run spends about 250 ms importing them, for a report whose sums take a
few milliseconds to read).

Where a full run settled the ledger and the prices (`settled.py`), and the report is one the
rollup answers with no filter but a window of whole quarter hours (`daily`, `weekly`, `monthly`
or `model`, in the reader's time zone or UTC, broken down by model or not, `--since` and
`--until` a date or a time on the quarter), the rows are the rollup's as `reports/usage.py`
reads them and the report is made by the same function (`usage_report.report_of`), priced
from the memo of prices. Anything else, a price the memo lacks or a window the full command
would refuse included, and the full path answers (and says what is wrong).
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime

from tracehouse.errors import ConfigError
from tracehouse.model.turn_time import on_a_quarter, rollup_sums, rollup_window
from tracehouse.reports.settled import NotKept, recall
from tracehouse.reports.turn_rules import cost_at
from tracehouse.reports.usage_report import ROLLED, Report, report_of
from tracehouse.timespec import to_utc_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from tracehouse.model.tokens import Tokens


def quick_report(
    period: str,
    store: str | None,
    config: str | None,
    *,
    utc: bool,
    breakdown: bool,
    since: str | None = None,
    until: str | None = None,
    env: Mapping[str, str] = os.environ,
) -> Report | None:
    """The report, or None where only the full path can make it."""
    window = _window(since, until, utc) if period in ROLLED else None
    found = recall(env, store, config) if window is not None else None
    conn = found.connect() if found is not None and found.source else None
    if window is None or found is None or conn is None:
        return None
    where, bounds = window
    today = datetime.now(UTC).isoformat()[:10]  # a turn with no time is priced today

    def cost_of(model: str | None, tokens: Tokens, at: str | None) -> float | None:
        return cost_at(found.rates(model, (at or today)[:10]), tokens)

    conn.row_factory = sqlite3.Row  # read by name, as a dict is, without making one a row
    try:
        rows = conn.execute(rollup_sums(where), bounds).fetchall()
        return report_of(rows, period, cost_of, found.source, breakdown=breakdown, utc=utc)
    except (sqlite3.Error, NotKept):  # no rollup (a ledger before it), a price not kept
        return None
    finally:
        conn.close()


def _window(since: str | None, until: str | None, utc: bool) -> tuple[str, list[str]] | None:
    """The rollup's rows in `--since`/`--until` as `build_session_filters` reads them; None for
    a window the rollup cannot hold or the full command refuses."""
    try:
        start = to_utc_iso(since, option="--since", utc=utc) if since is not None else None
        end = to_utc_iso(until, option="--until", utc=utc) if until is not None else None
    except ConfigError:
        return None
    if start and end and start >= end:
        return None
    if not all(at is None or on_a_quarter(at) for at in (start, end)):
        return None
    return rollup_window(start, end)
