"""Kimi CLI's sessions (`~/.kimi/sessions`): see README.md."""

from typing import Any

from tracehouse.parsers.base import reading_side
from tracehouse.parsers.kimi_cli.layout import (
    PROVIDER,
    default_roots,
    discover,
    unit_for,
    watch_roots,
)

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]


def __getattr__(name: str) -> Any:  # what reads, imported on first use
    return reading_side(__name__, name)
