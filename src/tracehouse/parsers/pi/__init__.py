"""The Pi coding agent's sessions (`~/.pi/agent/sessions`): see README.md."""

from tracehouse.parsers.pi.session import (
    PROVIDER,
    default_roots,
    discover,
    parse,
    unit_for,
    watch_roots,
)

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
