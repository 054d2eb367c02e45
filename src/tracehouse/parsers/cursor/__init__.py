"""Cursor's `state.vscdb` databases (global and per workspace): see README.md in this folder."""

from typing import Any

from tracehouse.parsers.base import reading_side
from tracehouse.parsers.cursor.discover import (
    PROVIDER,
    default_roots,
    discover,
    plan_unit,
    unit_for,
    watch_roots,
)

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "plan_unit", "unit_for", "watch_roots"]


def __getattr__(name: str) -> Any:  # what reads, imported on first use
    return reading_side(__name__, name)
