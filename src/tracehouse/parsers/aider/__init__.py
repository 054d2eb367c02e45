"""Aider's per-project chat history (`.aider.chat.history.md`): see README.md."""

from tracehouse.parsers.aider.history import (
    LAYOUT,
    PER_PROJECT,
    PROVIDER,
    default_roots,
    discover,
    parse,
    unit_for,
    watch_roots,
)

__all__ = ["LAYOUT", "PER_PROJECT", "PROVIDER", "default_roots", "discover", "parse", "unit_for",
           "watch_roots"]  # fmt: skip
