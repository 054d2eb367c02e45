"""Options as people type them, checked where they enter: a one-line error (exit 2) instead of
an option that silently does nothing (`--provider claude`) or damage (`--limit -3` returning
everything, `--full-scan-interval -1` scanning in a busy loop)."""

from __future__ import annotations

from tracehouse.errors import ConfigError
from tracehouse.model.tables import PROVIDERS


def provider(name: str | None, option: str = "--provider") -> str | None:
    if name is not None and name not in PROVIDERS:
        raise ConfigError(f"{option} {name!r}: known providers are {', '.join(PROVIDERS)}")
    return name


def count(value: int, option: str, most: int) -> int:
    """A limit or size: a whole number from 1 to `most`."""
    if not 1 <= value <= most:
        raise ConfigError(f"{option} {value}: give a number from 1 to {most}")
    return value


def seconds(value: float, option: str, least: float) -> float:
    """An interval: at least `least` seconds (0 or less would spin)."""
    if not value >= least:  # also refuses NaN
        raise ConfigError(f"{option} {value}: give at least {least:g} seconds")
    return value
