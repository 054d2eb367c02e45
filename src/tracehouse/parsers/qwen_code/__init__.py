"""Qwen Code's chats (`~/.qwen/projects/*/chats`, and the prompt log): see README.md."""

from tracehouse.parsers.qwen_code.chats import (
    PROVIDER,
    default_roots,
    discover,
    parse,
    unit_for,
    watch_roots,
)

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
