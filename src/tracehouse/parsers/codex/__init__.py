"""Codex CLI rollouts (`$CODEX_HOME/sessions/**/rollout-*.jsonl`): see README.md in this folder."""

from tracehouse.parsers.codex.discover import (
    PROVIDER,
    default_roots,
    discover,
    unit_for,
    watch_roots,
)
from tracehouse.parsers.codex.parse import parse

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
