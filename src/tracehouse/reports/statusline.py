"""The status line an agent shows under its prompt, from the ledger: today's cost across every
agent, the agent's active 5-hour block (its cost and the time it has left) and this session's
tokens, with a limit crossed said first.

Claude Code runs the command after each message with a JSON document on standard input
(`session_id`, `transcript_path`, `model`, `workspace`, …) and shows the first line it prints.
The session is found by the id the agent gives (`session_id`), as the ledger stores it for that
agent: until `sync` (or `sync live`) has read it, the line says so instead.

The block is found among the agent's turns of the last two days: a block depends on the turns
before it back to a pause of five hours, and two days without one is a run no person keeps.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from tracehouse.config import Limit, Settings
from tracehouse.errors import TracehouseError
from tracehouse.humanize import hours_minutes
from tracehouse.reports.blocks import blocks
from tracehouse.reports.filters import build_session_filters
from tracehouse.reports.limits import standings
from tracehouse.reports.pricing import Prices
from tracehouse.reports.usage import usage
from tracehouse.store.protocol import SessionStore

LOOK_BACK = timedelta(days=2)
# The agents whose status line hook passes a session id, and the provider it is stored under.
AGENTS = {"claude-code": "claude-code"}


def answer(settings: Settings, agent: str, document: str) -> str:
    """The line for `agent`'s status line hook, given the JSON document it passed: from the
    ledger the settings name, priced through the memo of prices. A ledger that cannot be read
    is said in the line, since an agent shows nothing of a command that fails."""
    from tracehouse.reports.price_memo import remembered_prices
    from tracehouse.reports.pricing import own_prices_file
    from tracehouse.shown import escaped_line
    from tracehouse.store import open_configured_store

    if agent not in AGENTS:
        raise TracehouseError(f"--agent {agent!r}: one of {', '.join(AGENTS)}")
    prices = remembered_prices(own_prices_file())
    try:
        ledger = open_configured_store(settings, create=False)
        try:
            line = status_line(ledger, _payload(document), prices, provider=AGENTS[agent],
                               limits=settings.limits)  # fmt: skip
        finally:
            ledger.close()
    except TracehouseError as exc:
        line = f"tracehouse: {exc}"
    prices.save()
    return escaped_line(line)


def _payload(text: str) -> dict[str, Any]:
    """The agent's document; anything else is an empty one (the line then has no session)."""
    try:
        found = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def status_line(
    store: SessionStore,
    payload: Mapping[str, Any],
    prices: Prices,
    *,
    provider: str = "claude-code",
    limits: Sequence[Limit] = (),
    now: datetime | None = None,
) -> str:
    now = now or datetime.now(UTC)
    local = now.astimezone()
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    today = usage(store, "daily", build_session_filters(since=midnight.isoformat()), prices)
    parts = [f"today {_money(today.total.cost, today.total.unpriced)}"]
    since = (now - LOOK_BACK).isoformat()
    mine = blocks(store, build_session_filters(providers=[provider], since=since), prices)
    active = [b for b in mine if b.active(now)]
    if active:
        block = active[-1]
        left = hours_minutes(block.end - now)
        parts.append(f"block {_money(block.cost, block.unpriced)}, {left} left")
    parts.append(_session(store, provider, str(payload.get("session_id") or "")))
    crossed = [s for s in standings(store, limits, prices, local) if s.crossed] if limits else []
    if crossed:
        parts.insert(0, "over limit: " + "; ".join(s.line() for s in crossed))
    return " · ".join(p for p in parts if p)


def _session(store: SessionStore, provider: str, source_id: str) -> str:
    if not source_id:
        return ""
    rows = store.query(
        "SELECT label, total_tokens FROM sessions WHERE source_provider = ?"
        " AND source_session_id = ?",
        [provider, source_id],
    )
    if not rows:
        return "this session: not in the ledger yet"
    tokens = rows[0]["total_tokens"]
    counted = "no tokens yet" if not tokens else f"{_short(int(tokens))} tokens"
    return f"{rows[0]['label']} {counted}"


def _money(cost: float, unpriced: int) -> str:
    return f"${cost:,.2f}" + ("*" if unpriced else "")


def _short(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.0f}k"
    return str(n)
