"""`usage blocks` on a hand-made ledger, both backends: a block opens at the hour of its first
turn and holds five hours; the next turn past them opens another; agents have blocks of their
own; an active block's burn rate and projection; its cost is its turns' (issue #68)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.reports.test_usage import PRICES, turn
from tests.store.factory import batch, item
from tracehouse.reports.blocks import blocks
from tracehouse.reports.filters import build_session_filters
from tracehouse.reports.usage import usage

SONNET = "claude-sonnet-4-5-20250929"


@pytest.fixture
def ledger(store):  # type: ignore[no-untyped-def]
    claude = item("c1", 2, model=SONNET)
    claude["turns"] = [
        turn(0, "2026-03-01T14:37:00.000Z", SONNET, 1000, 100),  # opens 14:00–19:00
        turn(1, "2026-03-01T18:59:00.000Z", SONNET, 1000, 100),  # the same block
        turn(2, "2026-03-01T19:00:00.000Z", SONNET, 1000, 100),  # opens 19:00–24:00
        turn(3, "2026-03-02T09:10:00.000Z", SONNET, 600, 60, 500),  # opens 09:00–14:00
        turn(4, "2026-03-02T10:10:00.000Z", SONNET, 600, 60),
    ]
    codex = item("x1", 2, model="gpt-5.4")
    codex["sourceProvider"] = "codex"
    codex["turns"] = [turn(0, "2026-03-01T15:05:00.000Z", "gpt-5.4", 50, 5)]
    store.import_batch(batch([claude, codex]))
    return store


def test_blocks_open_at_the_hour_and_last_five_hours_per_agent(ledger) -> None:  # type: ignore[no-untyped-def]
    found = blocks(ledger, build_session_filters(), PRICES)
    shown = [(b.provider, b.start.strftime("%d %H:%M"), b.end.strftime("%d %H:%M"), b.turns)
             for b in found]  # fmt: skip
    assert shown == [
        ("claude-code", "01 14:00", "01 19:00", 2),
        ("codex", "01 15:00", "01 20:00", 1),
        ("claude-code", "01 19:00", "02 00:00", 1),
        ("claude-code", "02 09:00", "02 14:00", 2),
    ]
    # the cost of the blocks is the cost of the days: each turn priced once, at its own date
    daily = usage(ledger, "daily", build_session_filters(utc=True), PRICES, utc=True)
    assert sum(b.cost for b in found) == pytest.approx(daily.total.cost)
    assert sum(b.tokens.total for b in found) == daily.total.tokens.total


def test_an_active_block_has_a_burn_rate_and_a_projection(ledger) -> None:  # type: ignore[no-untyped-def]
    last = blocks(ledger, build_session_filters(providers=["claude-code"]), PRICES)[-1]
    now = datetime(2026, 3, 2, 11, 10, tzinfo=UTC)  # an hour after the last turn
    assert last.active(now) and not last.active(datetime(2026, 3, 2, 14, 0, tzinfo=UTC))
    # 1,320 tokens over the hour from the first turn to the last: 22 a minute, 170 minutes left
    assert last.burn_rate() == pytest.approx(22.0)
    tokens, cost = last.projected(now)
    assert tokens == 1320 + 22 * 170 and cost == pytest.approx(last.cost * tokens / 1320)
    shown = last.to_json(now)
    assert shown["active"] and shown["projectedTokens"] == tokens
    assert shown["freshInputTokens"] == 700 and shown["cacheReadTokens"] == 500
