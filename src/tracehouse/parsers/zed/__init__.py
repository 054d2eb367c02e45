"""Zed's agent threads (`threads/threads.db` in its data dir): see README.md."""

from tracehouse.parsers.zed.threads import (
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
