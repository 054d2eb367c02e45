"""`tracehouse usage` answered from the rollup alone, before the settings, the store and the
price table load (a full run spends about 250 ms importing them, for a report whose sums take a
few milliseconds to read).

Where a full run settled the ledger and the prices (`settled.py`), and the report is one the
rollup answers with no filter (`daily`, `weekly`, `monthly` or `model`, in the reader's time
zone or UTC, broken down by model or not), the rows are the rollup's as `reports/usage.py`
reads them and the report is made by the same function (`usage_report.report_of`), priced
from the memo of prices. Anything else, a price the memo lacks included, and the full path
answers.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime

from tracehouse.model.turn_time import rollup_sums
from tracehouse.reports.settled import NotKept, recall
from tracehouse.reports.turn_rules import cost_at
from tracehouse.reports.usage_report import Report, report_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from tracehouse.model.tokens import Tokens

# The periods whose report the rollup answers unfiltered (`usage.ROLLED`).
QUICK_PERIODS = ("daily", "weekly", "monthly", "model")


def quick_report(
    period: str,
    store: str | None,
    config: str | None,
    *,
    utc: bool,
    breakdown: bool,
    env: Mapping[str, str] = os.environ,
) -> Report | None:
    """The report, or None where only the full path can make it."""
    found = recall(env, store, config) if period in QUICK_PERIODS else None
    conn = found.connect() if found is not None and found.source else None
    if found is None or conn is None:
        return None
    today = datetime.now(UTC).isoformat()[:10]  # a turn with no time is priced today

    def cost_of(model: str | None, tokens: Tokens, at: str | None) -> float | None:
        return cost_at(found.rates(model, (at or today)[:10]), tokens)

    conn.row_factory = sqlite3.Row  # read by name, as a dict is, without making one a row
    try:
        rows = conn.execute(rollup_sums()).fetchall()
        return report_of(rows, period, cost_of, found.source, breakdown=breakdown, utc=utc)
    except (sqlite3.Error, NotKept):  # no rollup (a ledger before it), a price not kept
        return None
    finally:
        conn.close()
