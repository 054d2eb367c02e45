"""GitHub Copilot CLI's sessions (`~/.copilot`, all three layouts): see README.md."""

from tracehouse.parsers.copilot_cli.layout import (
    PROVIDER,
    default_roots,
    discover,
    unit_for,
    watch_roots,
)
from tracehouse.parsers.copilot_cli.parse import parse

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
