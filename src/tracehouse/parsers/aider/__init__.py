"""Aider's per-project chat history (`.aider.chat.history.md`): see README.md."""

from tracehouse.parsers.aider.history import (
    PER_PROJECT,
    PROVIDER,
    default_roots,
    discover,
    parse,
    unit_for,
    watch_roots,
)

__all__ = ["PER_PROJECT", "PROVIDER", "default_roots", "discover", "parse", "unit_for",
           "watch_roots"]  # fmt: skip
