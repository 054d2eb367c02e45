"""Cline's tasks (VS Code's global storage for `saoudrizwan.claude-dev`): see README.md."""

from tracehouse.parsers.cline.task import (
    PROVIDER,
    default_roots,
    discover,
    parse,
    unit_for,
    watch_roots,
)

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
