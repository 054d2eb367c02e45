"""How the status line is answered: through the settings, the store and the price memo
(`answer`), or, when a full answer settled them before, from a process that imports nothing
heavier than `sqlite3` and `json` (`quick_answer`, over `settled.py`).

Claude Code runs `tracehouse statusline` after every message; a new Python process that loads
the settings, the store and the price table spends most of its time importing them. The quick
path answers from the ledger itself, read-only, with the same SQL (`statusline.status_line`);
limits to check, or anything `settled.recall` does not vouch for, and the full path answers and
keeps the new state.
"""

from __future__ import annotations

import os
import sqlite3

from tracehouse.reports.settled import NotKept, query_of, recall, remember
from tracehouse.reports.statusline import AGENTS, payload_of, status_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from tracehouse.config import Settings
    from tracehouse.reports.turn_rules import Rates


def answer(settings: Settings, agent: str, document: str,
           flags: tuple[str | None, str | None] | None = None) -> str:  # fmt: skip
    """The line for `agent`'s status line hook, given the JSON document it passed: from the
    ledger the settings name, priced through the memo of prices. A ledger that cannot be read
    is said in the line, since an agent shows nothing of a command that fails. Given the
    `--store` and `--config` flags the settings were read with, what the quick path needs to
    answer the next call alone is kept (`remember`)."""
    from datetime import UTC, datetime

    from tracehouse.errors import TracehouseError
    from tracehouse.reports.limits import standings
    from tracehouse.reports.price_memo import remembered_prices
    from tracehouse.reports.pricing import own_prices_file
    from tracehouse.shown import escaped_line
    from tracehouse.store import open_configured_store
    from tracehouse.store.sqlite.usage_slots import SINCE_SCHEMA

    if agent not in AGENTS:
        raise TracehouseError(f"--agent {agent!r}: one of {', '.join(AGENTS)}")
    own = own_prices_file()
    prices = remembered_prices(own)

    def rates_of(model: str | None, day: str) -> Rates | None:
        p = prices.price(model, day)
        return None if p is None else (p.input, p.output, p.cache_read, p.cache_write)

    try:
        ledger = open_configured_store(settings, create=False)
        try:
            now = datetime.now(UTC)
            crossed = [s.line() for s in standings(ledger, settings.limits, prices,
                                                   now.astimezone()) if s.crossed]  # fmt: skip
            rolled = ledger.backend == "sqlite" and ledger.schema_version >= SINCE_SCHEMA
            line = status_line(ledger.query, payload_of(document), rates_of,
                               provider=AGENTS[agent], crossed=crossed, now=now,
                               rolled=rolled)  # fmt: skip
            if flags is not None and ledger.backend == "sqlite":
                remember(settings, ledger.query, prices.binding, own, flags)
        finally:
            ledger.close()
    except TracehouseError as exc:
        line = f"tracehouse: {exc}"
    prices.save()
    return escaped_line(line)


def quick_answer(agent: str, store: str | None, config: str | None, document: str,
                 env: Mapping[str, str] = os.environ) -> str | None:  # fmt: skip
    """The line, or None where only the full path can answer it."""
    found = recall(env, store, config) if agent in AGENTS else None
    if found is None or found.limits is not False:
        return None
    conn = found.connect()
    if conn is None:
        return None
    try:
        line = status_line(query_of(conn), payload_of(document), found.rates,
                           provider=AGENTS[agent], rolled=True)  # fmt: skip
    except (sqlite3.Error, NotKept):
        return None
    finally:
        conn.close()
    from tracehouse.shown import escaped_line

    return escaped_line(line)
