"""Factory Droid's sessions (`~/.factory/sessions`): see README.md."""

from tracehouse.parsers.droid.session import (
    PROVIDER,
    default_roots,
    discover,
    parse,
    unit_for,
    watch_roots,
)

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
