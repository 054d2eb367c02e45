"""The parsers, listed explicitly (STYLE "Source interface"): provider name → module."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from tracehouse.parsers import (
    aider,
    claude_code,
    cline,
    codex,
    continue_dev,
    copilot_cli,
    crush,
    cursor,
    cursor_agent,
    droid,
    gemini_cli,
    goose,
    kilo_code,
    kimi_cli,
    opencode,
    openhands,
    pi,
    qwen_code,
    roo_code,
    warp,
    zed,
)
from tracehouse.parsers.base import SourceParser

_MODULES: tuple[ModuleType, ...] = (
    claude_code,
    codex,
    cursor,
    gemini_cli,
    opencode,
    cursor_agent,
    copilot_cli,
    qwen_code,
    pi,
    kimi_cli,
    cline,
    crush,
    aider,
    continue_dev,
    openhands,
    zed,
    roo_code,
    kilo_code,
    goose,
    droid,
    warp,
)
PARSERS: dict[str, SourceParser] = {m.PROVIDER: m for m in _MODULES}  # type: ignore[misc]


def import_readers(providers: Iterable[str]) -> None:
    """Import these sources' reading side now (`reading_side`): a process about to fork its
    parsers, which then share it instead of each importing its own."""
    for provider in set(providers):
        _ = PARSERS[provider].parse
