"""Gemini CLI's chat files (`~/.gemini/tmp/<project>/chats/`): see README.md in this folder."""

from tracehouse.parsers.gemini_cli.discover import (
    PROVIDER,
    default_roots,
    discover,
    unit_for,
    watch_roots,
)
from tracehouse.parsers.gemini_cli.parse import parse

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
