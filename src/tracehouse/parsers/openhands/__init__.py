"""OpenHands' conversations (its file store, `~/.openhands/sessions`): see README.md."""

from tracehouse.parsers.openhands.conversation import (
    PROVIDER,
    default_roots,
    discover,
    parse,
    unit_for,
    watch_roots,
)

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
