"""The prices a report asked for before, kept in a file, for what runs too often to load the
price dataset each time: the status line, which Claude Code runs after every message.

Loading the dataset and pricing a first model takes most of a second; the status line prices a
handful of (model, day) pairs, the same ones all day. `PriceMemo` answers those from its file
and loads the full table only for a pair it has not seen, then keeps the answer. The file is
bound to the dataset's files as installed and to the user's own price file (their sizes and
times): either changing empties it. Like any cache it may be deleted or damaged at any time; a
damaged entry is asked of the table again.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import orjson

from tracehouse.model.tokens import Tokens
from tracehouse.reports.price_data import Price
from tracehouse.reports.pricing import PriceTable, priced
from tracehouse.reports.turn_rules import kept_rates, price_key


class PriceMemo:
    def __init__(self, path: Path, own_file: Path, load: Callable[[], PriceTable]) -> None:
        self.path = path
        self._load = load
        self._table: PriceTable | None = None
        self.binding = _binding(own_file)
        self.known: dict[str, list[float | None] | None] = {}
        self._source = ""
        # A file missing or bound to other prices is written even if nothing is priced: the
        # quick paths (`settled.py`) answer only from a memo bound to the prices in force.
        self.dirty = True
        with contextlib.suppress(OSError, orjson.JSONDecodeError, AttributeError, TypeError):
            kept = orjson.loads(path.read_bytes())
            if kept.get("binding") == self.binding and isinstance(kept.get("known"), dict):
                self.known, self._source = kept["known"], str(kept.get("source") or "")
                self.dirty = False

    @property
    def source(self) -> str:
        """Where the prices come from, as a report names it."""
        return self._source or self._loaded().source

    def price(self, model: str | None, at: str | None = None) -> Price | None:
        day = (at or datetime.now(UTC).isoformat())[:10]
        key = price_key(model, day)
        if key in self.known:
            found = self.known[key]
            if found is None:
                return None
            kept = _kept_price(found)
            if kept is not None:
                return kept
        price = self._loaded().price(model, day)
        self.known[key] = None if price is None else [
            price.input, price.output, price.cache_read, price.cache_write
        ]  # fmt: skip
        self.dirty = True
        return price

    def cost(self, model: str | None, tokens: Tokens, at: str | None = None) -> float | None:
        return priced(self.price(model, at), tokens)

    def save(self) -> None:
        if not self.dirty:
            return
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(f".{os.getpid()}.partial")
            kept = {"binding": self.binding, "source": self._source, "known": self.known}
            partial.write_bytes(orjson.dumps(kept))
            os.replace(partial, self.path)

    def _loaded(self) -> PriceTable:
        if self._table is None:
            self._table = self._load()
            if self._source != self._table.source:  # a new dataset, or the first answer
                self.known = {} if self._source else self.known
                self._source = self._table.source
                self.dirty = True  # kept, or a report that priced nothing loads it every time
        return self._table


def _kept_price(found: object) -> Price | None:
    rates = kept_rates(found)
    return None if rates is None else Price(*rates)


def _binding(own_file: Path) -> str:
    """What the kept prices were read from: the dataset's files as installed (not its version:
    reading a package's metadata costs more than the status line may spend) and the user's own
    price file."""
    import importlib.util

    return f"{_stamp(importlib.util.find_spec('genai_prices'))}|{own_file}:{_file_stamp(own_file)}"


def _stamp(spec: object) -> str:
    origin = getattr(spec, "origin", None)
    return f"{origin}:{_file_stamp(Path(origin))}" if origin else "none"


def _file_stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "none"
    return f"{st.st_size}:{st.st_mtime_ns}"


def remembered_prices(own_file: Path) -> PriceMemo:
    """The prices of the dataset and `own_file`, as the reports of the command line look them
    up: through the memo in the state directory (save it when done)."""
    from tracehouse.config import state_dir
    from tracehouse.reports.pricing import load_prices

    return PriceMemo(state_dir() / "prices.json", own_file, lambda: load_prices(own_file))
