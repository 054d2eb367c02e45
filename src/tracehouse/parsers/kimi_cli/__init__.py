"""Kimi CLI's sessions (`~/.kimi/sessions`): see README.md."""

from tracehouse.parsers.kimi_cli.layout import (
    PROVIDER,
    default_roots,
    discover,
    unit_for,
    watch_roots,
)
from tracehouse.parsers.kimi_cli.parse import parse

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
