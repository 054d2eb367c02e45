"""Crush's sessions (a project's `.crush/crush.db`): see README.md."""

from tracehouse.parsers.crush.store import (
    LAYOUT,
    PER_PROJECT,
    PROVIDER,
    default_roots,
    discover,
    parse,
    plan_unit,
    unit_for,
    watch_roots,
)

__all__ = ["LAYOUT", "PER_PROJECT", "PROVIDER", "default_roots", "discover", "parse", "plan_unit",
           "unit_for", "watch_roots"]  # fmt: skip
