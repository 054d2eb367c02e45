"""The Cursor agent's transcripts and CLI stores (`~/.cursor`): see README.md in this folder."""

from tracehouse.parsers.cursor_agent.discover import (
    PROVIDER,
    default_roots,
    discover,
    unit_for,
    watch_roots,
)
from tracehouse.parsers.cursor_agent.parse import parse, plan_unit

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "plan_unit", "unit_for", "watch_roots"]
