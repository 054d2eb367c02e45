"""Model prices from genai-prices, the dataset Pydantic maintains of every provider's API list
prices (with their history and long-context tiers), read from the copy installed with it: a
report never reaches the network.

The ledger keeps tokens per turn, and a turn often sums several model calls (each tool step is
a request), so a tier that starts at a request's input size (Anthropic and Google above 200 K)
cannot be told from a turn's sum: every turn is priced at the base rate, which is what a
request below the tier pays. Most requests of a coding agent are; a session that ran in a
1 M-token context was billed more than the report says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

PACKAGE = "genai-prices"
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_read: float | None = None  # None: cached input is billed as input
    cache_write: float | None = None  # None: written input is billed as input



def dataset_name() -> str:
    from importlib import metadata  # 9 ms of a status line's start otherwise

    try:
        return f"{PACKAGE} {metadata.version(PACKAGE)}"
    except metadata.PackageNotFoundError:
        return PACKAGE


class Dataset:
    """Prices looked up by a model's name as an agent wrote it, once per model and day."""

    def __init__(self) -> None:
        self.lookup = lru_cache(maxsize=4096)(self._lookup)

    def price(self, model: str, at: str | None = None) -> Price | None:
        found = _DAY.match(at or "")
        return self.lookup(model.strip().lower(), found.group(0) if found else None)

    def _lookup(self, model: str, day: str | None) -> Price | None:
        from genai_prices import data_snapshot

        snapshot = data_snapshot.get_snapshot()
        for name, provider in _candidates(model, {p.id for p in snapshot.providers}):
            try:
                _, info = snapshot.find_provider_model(name, None, provider, None)
            except LookupError:
                continue
            when = datetime.fromisoformat(day).replace(tzinfo=UTC) if day else datetime.now(UTC)
            return _price(info.get_prices(when))
        return None


def _candidates(model: str, providers: set[str]) -> list[tuple[str, str | None]]:
    """The names to look a model up by: as written, then without the router's or host's
    prefix (`moonshotai/kimi-k2.6`, `deepseek-ai/deepseek-v4-flash`), by that provider where
    the dataset knows it, and without a `provider.` head (`openai/deepseek.deepseek-chat`)."""
    found: list[tuple[str, str | None]] = [(model, None)]
    prefix, _, bare = model.rpartition("/")
    if prefix and bare:
        host = prefix.rsplit("/", 1)[-1]
        if host in providers:
            found.append((bare, host))
        found.append((bare, None))
    # `provider.model`, as Bedrock and some proxies name models (`deepseek.deepseek-chat`)
    owner, dot, rest = (bare or model).partition(".")
    if dot and rest and owner in providers:
        found.append((rest, owner))
    return found


def _price(prices: Any) -> Price | None:
    """The base rates of a genai-prices `ModelPrice`, in $ per million tokens."""
    rates = {
        field: _base(getattr(prices, f"{field}_mtok", None))
        for field in ("input", "output", "cache_read", "cache_write")
    }
    if rates["input"] is None or rates["output"] is None:
        return None  # priced by something other than tokens (images, audio, requests)
    return Price(**rates)  # type: ignore[arg-type]


def _base(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, Decimal | int | float):
        return float(value)
    base = getattr(value, "base", None)  # TieredPrices: the rate below the first tier
    return None if base is None else float(base)
