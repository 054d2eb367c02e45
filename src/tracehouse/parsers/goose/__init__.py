"""Goose's sessions (`sessions/sessions.db` in its data dir, and older releases' JSONL files):
see README.md."""

from tracehouse.parsers.goose.sessions import (
    PROVIDER,
    default_roots,
    discover,
    parse,
    plan_unit,
    unit_for,
    watch_roots,
)

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "plan_unit", "unit_for",
           "watch_roots"]  # fmt: skip
