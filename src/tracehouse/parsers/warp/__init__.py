"""Warp's Agent Mode conversations (`warp.sqlite` in its state dir): see README.md."""

from tracehouse.parsers.warp.agent import (
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
