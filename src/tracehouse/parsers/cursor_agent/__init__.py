"""The Cursor agent's transcripts and CLI stores (`~/.cursor`): see README.md in this folder."""

from typing import Any

from tracehouse.parsers.base import reading_side
from tracehouse.parsers.cursor_agent.discover import (
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
