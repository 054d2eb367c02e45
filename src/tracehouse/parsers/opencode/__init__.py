"""OpenCode's sessions (`~/.local/share/opencode`, every storage generation): see README.md."""

from tracehouse.parsers.opencode.discover import (
    PROVIDER,
    default_roots,
    discover,
    unit_for,
    watch_roots,
)
from tracehouse.parsers.opencode.parse import parse, plan_unit

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "plan_unit", "unit_for", "watch_roots"]
