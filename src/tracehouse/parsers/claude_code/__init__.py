"""Claude Code transcripts (`~/.claude/projects/**.jsonl`): see README.md in this folder."""

from tracehouse.parsers.claude_code.discover import (
    PROVIDER,
    default_roots,
    discover,
    unit_for,
    watch_roots,
)
from tracehouse.parsers.claude_code.parse import parse

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
