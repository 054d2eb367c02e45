"""The status line an agent shows under its prompt, from the ledger: today's cost across every
agent, the agent's active 5-hour block (its cost and the time it has left; for an agent metered
in such windows) and this session's tokens, with a limit crossed said first.

Claude Code runs the command after each message with a JSON document on standard input
(`session_id`, `transcript_path`, `model`, `workspace`, …) and shows the first line it prints;
Qwen Code passes the same `session_id`, `model` and `workspace` (and its context window).
The session is found by the id the agent gives (`session_id`), as the ledger stores it for that
agent: until `sync` (or `sync live`) has read it, the line says so instead.

The block is found among the agent's turns of the last two days: a block depends on the turns
before it back to a pause of five hours, and two days without one is a run no person keeps.

The line is computed here from SQL and a price lookup alone, so that a new process can answer
it having imported nothing heavier than `sqlite3` (`statusline_answer.quick_answer`);
`statusline_answer.answer` is the same line through the configured store, the price memo and
the limits.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tracehouse.humanize import hours_minutes
from tracehouse.model.turn_time import MODEL, ROLLUP, ROLLUP_SUMS, WHEN, on_a_quarter
from tracehouse.reports.turn_rules import (
    TOKEN_SUMS,
    WINDOW,
    block_hour,
    dollars,
    opens_block,
)
from tracehouse.timespec import parse_stored, to_utc_iso

TYPE_CHECKING = False  # typing itself costs the quick path more than its queries
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    # The ledger's rows for a statement (SessionStore.query).
    Query = Callable[[str, Sequence[Any]], list[dict[str, Any]]]
    from tracehouse.reports.turn_rules import Rates

    # A model's rates on a UTC day; None: no price.
    RatesOf = Callable[[str | None, str], Rates | None]

LOOK_BACK = timedelta(days=2)
# The agents whose status line hook runs a command with a session id on its standard input
# (Claude Code's `statusLine`; Qwen Code's `ui.statusLine`, read in its 0.24.4 bundle), and the
# provider their sessions are stored under.
AGENTS = {"claude-code": "claude-code", "qwen-code": "qwen-code"}
# Those metered in 5-hour windows (Claude's subscriptions), whose line shows the active one.
WINDOWED = ("claude-code",)


def payload_of(text: str) -> dict[str, Any]:
    """The agent's document; anything else is an empty one (the line then has no session)."""
    try:
        found = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def status_line(
    query: Query,
    payload: dict[str, Any],
    rates_of: RatesOf,
    *,
    provider: str = "claude-code",
    crossed: Sequence[str] = (),
    now: datetime | None = None,
    rolled: bool = False,
) -> str:
    """The line; `rolled`: the ledger keeps the usage rollup (SQLite), which sums today's
    turns in a read of a few rows where the turns themselves take milliseconds."""
    now = now or datetime.now(UTC)
    midnight = now.astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
    today = to_utc_iso(midnight.isoformat(), option="today")
    if rolled and on_a_quarter(today):  # the rollup's quarter hours hold today whole
        spent = query(_TODAY_ROLLED, [today])
    else:
        spent = query(_TODAY, [today, today])
    parts = [f"today {_money(*_cost(spent, rates_of))}"]
    since = to_utc_iso((now - LOOK_BACK).isoformat(), option="since")
    block = _last_block(query(_BLOCK_TURNS, [provider, since, since])) \
        if provider in WINDOWED else None  # fmt: skip
    if block is not None and now < block[0] + WINDOW and now - block[1] < WINDOW:
        left = hours_minutes(block[0] + WINDOW - now)
        parts.append(f"block {_money(*_cost(block[2], rates_of))}, {left} left")
    parts.append(_session(query, provider, str(payload.get("session_id") or "")))
    if crossed:
        parts.insert(0, "over limit: " + "; ".join(crossed))
    return " · ".join(p for p in parts if p)


# Today's tokens of every agent by model and UTC day (what a price depends on), as the daily
# usage report sums them (`usage.turn_sql`: a turn counts where it began; the window spelled
# out so that it is a range of the index on turns.started_at).
_WINDOW = "(t.started_at >= ? OR t.started_at IS NULL AND s.created_at >= ?)"
_TODAY = (
    f"SELECT substr({WHEN}, 1, 10) AS day, {MODEL} AS model, {TOKEN_SUMS}"
    f" FROM turns t JOIN sessions s ON s.session_id = t.session_id WHERE {_WINDOW}"
    f" GROUP BY substr({WHEN}, 1, 10), {MODEL}"
)
# The same from the rollup the SQLite writer keeps, by its quarter hours from local midnight on
# (the turns with no time of their own, which the index on their start does not find, are in it
# by their session's: most of the milliseconds the query above takes).
_TODAY_ROLLED = (
    "SELECT substr(u.slot, 1, 10) AS day, nullif(u.model, '') AS model, "
    + ", ".join(f"sum(u.{c}) AS {c}" for c in ROLLUP_SUMS)
    + f" FROM {ROLLUP} u WHERE u.slot >= ? GROUP BY 1, 2"
)
# One agent's turns of the last two days, oldest first, as the block report reads them (`+`: by
# the index on the turns' start, not every turn of the agent's sessions, which grow for ever).
_BLOCK_TURNS = (
    f"SELECT {WHEN} AS at, {MODEL} AS model, t.input_tokens, t.output_tokens,"
    " t.cached_input_tokens, t.cache_write_tokens, t.reasoning_tokens"
    " FROM turns t JOIN sessions s ON s.session_id = t.session_id"
    f" WHERE {WHEN} IS NOT NULL AND t.input_tokens + t.output_tokens > 0"
    f" AND +s.source_provider = ? AND {_WINDOW} ORDER BY {WHEN}"
)


def _last_block(
    turns: list[dict[str, Any]],
) -> tuple[datetime, datetime, list[dict[str, Any]]] | None:
    """The last block of these turns: its start, its last turn's time and its turns as rows
    of a day and a model (None when there are no turns)."""
    block: tuple[datetime, datetime, list[dict[str, Any]]] | None = None
    for row in turns:
        at = parse_stored(row["at"], utc=True)
        if at is None:
            continue
        if block is None or opens_block(at, block[0], block[1]):
            block = (block_hour(at), at, [])
        block = (block[0], at, block[2])
        block[2].append({**row, "day": row["at"][:10]})
    return block


def _cost(rows: list[dict[str, Any]], rates_of: RatesOf) -> tuple[float, int]:
    """The rows' cost and the tokens of models without a price (which the cost leaves out)."""
    cost, unpriced = 0.0, 0
    for row in rows:
        input_ = int(row["input_tokens"] or 0)
        output = int(row["output_tokens"] or 0)
        read, write = int(row["cached_input_tokens"] or 0), int(row["cache_write_tokens"] or 0)
        rates = rates_of(row["model"], row["day"])
        if rates is None:
            unpriced += input_ + output
            continue
        cost += dollars(rates, fresh=max(input_ - read - write, 0), cache_read=read,
                        cache_write=write, output=output)  # fmt: skip
    return cost, unpriced


def _session(query: Query, provider: str, source_id: str) -> str:
    if not source_id:
        return ""
    rows = query(
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
