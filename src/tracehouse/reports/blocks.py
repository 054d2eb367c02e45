"""5-hour usage blocks: the windows in which Anthropic (and others since) meter a subscription,
per agent, as ccusage draws them.

A block opens at the hour of its first turn (a turn at 14:37 opens the block 14:00–19:00) and
takes every later turn until one comes five hours or more after the block opened, or after the
turn before it: that turn opens the next block (`turn_rules.opens_block`). A block whose end
is still ahead and whose last turn is less than five hours old is active: its burn rate is its
tokens over the minutes from its first turn to its last, and its projection adds that rate over
the minutes it has left.

Each turn counts at the time it began (ccusage dates each response: a turn that runs across a
block's end counts whole in the block it began in). Tokens are priced per model and UTC day, as
`usage.py` prices a sum: exactly as the turns one by one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tracehouse.model.tokens import Tokens, tokens_of
from tracehouse.model.turn_time import MODEL, WHEN
from tracehouse.reports.filters import SessionFilters
from tracehouse.reports.pricing import Prices
from tracehouse.reports.turn_rules import WINDOW, block_hour, opens_block
from tracehouse.reports.usage import UNKNOWN, turn_sql
from tracehouse.store.protocol import SessionStore
from tracehouse.timespec import parse_stored


@dataclass
class Block:
    provider: str
    start: datetime  # UTC, on the hour
    first: datetime  # the first turn's time
    last: datetime  # the last turn's time
    tokens: Tokens = field(default_factory=Tokens)
    turns: int = 0
    cost: float = 0.0
    unpriced: int = 0
    models: set[str] = field(default_factory=set)
    # (model, UTC day) → tokens: priced once the block is whole
    parts: dict[tuple[str | None, str], Tokens] = field(default_factory=dict)

    @property
    def end(self) -> datetime:
        return self.start + WINDOW

    def active(self, now: datetime) -> bool:
        return now < self.end and now - self.last < WINDOW

    def burn_rate(self) -> float:
        """Tokens a minute, from the first turn to the last (a single turn: over one minute)."""
        minutes = max((self.last - self.first).total_seconds() / 60, 1.0)
        return self.tokens.total / minutes

    def projected(self, now: datetime) -> tuple[int, float]:
        """Tokens and cost by the block's end at the burn rate so far."""
        left = max((self.end - now).total_seconds() / 60, 0.0)
        more = self.burn_rate() * left
        share = more / self.tokens.total if self.tokens.total else 0.0
        return self.tokens.total + round(more), self.cost * (1 + share)

    def to_json(self, now: datetime) -> dict[str, Any]:
        t = self.tokens
        out: dict[str, Any] = {
            "provider": self.provider,
            "start": _iso(self.start),
            "end": _iso(self.end),
            "firstTurn": _iso(self.first),
            "lastTurn": _iso(self.last),
            "active": self.active(now),
            "models": sorted(self.models),
            "turns": self.turns,
            "freshInputTokens": t.fresh,
            "cacheWriteTokens": t.cache_write,
            "cacheReadTokens": t.cache_read,
            "outputTokens": t.output,
            "reasoningTokens": t.reasoning,
            "totalTokens": t.total,
            "cost": None if self.unpriced and not self.cost else round(self.cost, 6),
            "unpricedTokens": self.unpriced,
        }
        if self.active(now):
            tokens, cost = self.projected(now)
            out |= {"tokensPerMinute": round(self.burn_rate(), 1),
                    "projectedTokens": tokens, "projectedCost": round(cost, 6)}  # fmt: skip
        return out


def blocks(store: SessionStore, filters: SessionFilters, prices: Prices) -> list[Block]:
    """Every block of the filtered sessions' turns, per agent, oldest first."""
    open_: dict[str, Block] = {}
    done: list[Block] = []
    for row in _turns(store, filters):
        at = parse_stored(row["at"], utc=True)
        if at is None:
            continue
        provider = row["source_provider"]
        block = open_.get(provider)
        if block is None or opens_block(at, block.start, block.last):
            if block is not None:
                done.append(block)
            block = open_[provider] = Block(provider, block_hour(at), at, at)
        tokens = tokens_of(row)
        block.last = at
        block.turns += 1
        block.tokens += tokens
        block.models.add(row["model"] or UNKNOWN)
        key = (row["model"], row["at"][:10])
        block.parts[key] = block.parts.get(key, Tokens()) + tokens
    done.extend(open_.values())
    for block in done:
        for (model, day), tokens in block.parts.items():
            cost = prices.cost(model, tokens, day)
            if cost is None:
                block.unpriced += tokens.total
            else:
                block.cost += cost
    return sorted(done, key=lambda b: (b.start, b.provider))


def _turns(store: SessionStore, filters: SessionFilters) -> Iterable[dict[str, Any]]:
    model, when = MODEL, WHEN
    where, params = turn_sql(filters)
    return store.query(
        f"SELECT {when} AS at, {model} AS model, s.source_provider,"
        " t.input_tokens, t.output_tokens, t.cached_input_tokens, t.cache_write_tokens,"
        " t.reasoning_tokens"
        f" FROM turns t JOIN sessions s ON s.session_id = t.session_id"
        f" WHERE {when} IS NOT NULL AND t.input_tokens + t.output_tokens > 0{where}"
        f" ORDER BY {when}",
        params,
    )


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
