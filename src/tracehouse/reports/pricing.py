"""What tokens cost: the prices of a maintained dataset (`price_data.py`), overridden model by
model by the user's own file (`prices.toml`: a model the dataset lacks, a negotiated rate). A
model found in neither has no price, and its cost is unknown (None), never a guess."""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tracehouse.errors import ConfigError
from tracehouse.model.tokens import Tokens
from tracehouse.reports.price_data import Dataset, Price, dataset_name
from tracehouse.reports.turn_rules import cost_at

FIELDS = ("input", "cache_read", "cache_write", "output")
_DATED = re.compile(r"-\d{8}$")  # claude-sonnet-4-5-20250929 is priced as claude-sonnet-4-5


class Prices(Protocol):
    """What a report prices with: the table itself, or the memo of its answers
    (`price_memo.PriceMemo`)."""

    @property
    def source(self) -> str: ...

    def price(self, model: str | None, at: str | None = None) -> Price | None: ...

    def cost(self, model: str | None, tokens: Tokens, at: str | None = None) -> float | None: ...


@dataclass(frozen=True)
class PriceTable:
    """The user's own prices (`prices.toml`) over the dataset's (`price_data.py`); a model in
    neither has no price."""

    own: Mapping[str, Price]
    source: str  # where the prices come from, as a report names it
    dataset: Dataset

    def price(self, model: str | None, at: str | None = None) -> Price | None:
        """`model`'s price on the day `at` (an ISO time; None: today)."""
        if not model:
            return None
        name = model.strip().lower()
        for key in (name, name.rsplit("/", 1)[-1]):  # anthropic/claude-… as claude-…
            own = self.own.get(key) or self.own.get(_DATED.sub("", key))
            if own is not None:
                return own
        return self.dataset.price(name, at)

    def cost(self, model: str | None, tokens: Tokens, at: str | None = None) -> float | None:
        return priced(self.price(model, at), tokens)


def priced(price: Price | None, tokens: Tokens) -> float | None:
    """`tokens` at `price` in dollars; None when there is no price for tokens to be paid."""
    rates = None if price is None else (price.input, price.output, price.cache_read,
                                        price.cache_write)  # fmt: skip
    return cost_at(rates, tokens)


def own_prices_file() -> Path:
    """Where a user's own prices are kept: `prices.toml` beside the config file."""
    from tracehouse.config import default_config_path

    return default_config_path().with_name("prices.toml")


def load_prices(user_file: Path | None = None) -> PriceTable:
    """The dataset's prices with `user_file`'s models on top (a missing default file is fine)."""
    found, source = Dataset(), dataset_name()
    if user_file is None or not user_file.exists():
        return PriceTable({}, source, found)
    try:
        text = user_file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{user_file}: cannot read the price file: {exc}") from None
    own = _parse(text, str(user_file))
    return PriceTable(own, f"{user_file} and {source}" if own else source, found)


def _parse(text: str, where: str) -> dict[str, Price]:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    models = raw.get("models", {})
    if not isinstance(models, dict):
        raise ConfigError(f"{where}: [models] must be a table of models")
    return {
        str(name).lower(): _price(entry, f"{where}: models.{name}")
        for name, entry in models.items()
    }


def _price(entry: Any, where: str) -> Price:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: give input, output, cache_read, cache_write in $ per 1M")
    unknown = sorted(set(entry) - set(FIELDS))
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown field (known: {', '.join(FIELDS)})")
    values: dict[str, float] = {}
    for name, value in entry.items():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0:
            raise ConfigError(f"{where}.{name}: {value!r} is not a price (a number ≥ 0)")
        values[name] = float(value)
    for name in ("input", "output"):
        if name not in values:
            raise ConfigError(f"{where}.{name}: missing")
    return Price(**values)
