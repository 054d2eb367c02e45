"""What every report agrees on about a turn, in a module that imports nothing but `datetime`: the
status line answers with it before anything heavier loads (`statusline_answer.py`), and the
usage and block reports build on the same rules, so that no two of them count differently.

- A turn's model and time, as SQL over `turns t JOIN sessions s`: its own, else its session's
  (`model/turn_time.py`, which the store's usage rollup shares).
- The 5-hour block (ccusage's): a block opens at the hour of its first turn and takes every
  later turn until one comes five hours or more after the block opened, or after the turn
  before it: that turn opens the next block.
- What tokens cost at a price: the input no cache served at the input rate, cache reads and
  writes at theirs (the input rate where the price names none), output at the output rate; and
  how the memo of prices keeps a price (`price_memo.py`), a model's on a UTC day.
"""

from __future__ import annotations

from datetime import datetime, timedelta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tracehouse.model.tokens import Tokens

    # A model's rates (US dollars a million tokens): input, output, cache read, cache write.
    Rates = tuple[float, float, float | None, float | None]

# A turn's counts in the ledger's convention (`model/tokens.py`), in `tokens_of`'s order.
TOKEN_SUMS = (
    "sum(t.input_tokens) AS input_tokens, sum(t.output_tokens) AS output_tokens,"
    " sum(t.cached_input_tokens) AS cached_input_tokens,"
    " sum(t.cache_write_tokens) AS cache_write_tokens,"
    " sum(t.reasoning_tokens) AS reasoning_tokens"
)

WINDOW = timedelta(hours=5)


def block_hour(at: datetime) -> datetime:
    """Where a block that `at` opens begins."""
    return at.replace(minute=0, second=0, microsecond=0)


def opens_block(at: datetime, start: datetime, last: datetime) -> bool:
    """Whether a turn at `at` opens a new block after one that began at `start` and whose
    latest turn was at `last`."""
    return at - start >= WINDOW or at - last >= WINDOW


def dollars(
    rates: Rates,
    *,
    fresh: int,
    cache_read: int,
    cache_write: int,
    output: int,
) -> float:
    """Tokens at `rates` (input, output, cache read, cache write; US dollars a million)."""
    input_rate, output_rate, read_rate, write_rate = rates
    read = input_rate if read_rate is None else read_rate
    write = input_rate if write_rate is None else write_rate
    return (fresh * input_rate + cache_read * read + cache_write * write
            + output * output_rate) / 1e6  # fmt: skip


def cost_at(rates: Rates | None, tokens: Tokens) -> float | None:
    """`tokens` at `rates` in dollars; None when there are no rates for tokens to be paid."""
    if rates is None:
        return None if tokens.total else 0.0
    return dollars(rates, fresh=tokens.fresh, cache_read=tokens.cache_read,
                   cache_write=tokens.cache_write, output=tokens.output)  # fmt: skip


def price_key(model: str | None, day: str) -> str:
    """What the memo of prices keeps a model's price on a UTC day under."""
    return f"{(model or '').strip().lower()}|{day}"


def kept_rates(found: object) -> Rates | None:
    """A kept price's rates, or None for a damaged entry (then asked of the table again)."""
    if not isinstance(found, list) or len(found) != 4:
        return None
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in found[:2])
    optional = all(v is None or (isinstance(v, int | float) and not isinstance(v, bool))
                   for v in found[2:])  # fmt: skip
    return (found[0], found[1], found[2], found[3]) if numbers and optional else None
