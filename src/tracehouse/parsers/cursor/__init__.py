"""Cursor's `state.vscdb` databases (global and per workspace): see README.md in this folder."""

from tracehouse.parsers.cursor.discover import (
    PROVIDER,
    default_roots,
    discover,
    unit_for,
    watch_roots,
)
from tracehouse.parsers.cursor.parse import parse, plan_unit

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "plan_unit", "unit_for", "watch_roots"]
