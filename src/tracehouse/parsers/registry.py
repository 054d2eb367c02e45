"""The parsers, listed explicitly (STYLE "Source interface"): provider name → module."""

from __future__ import annotations

from tracehouse.parsers import claude_code, codex, cursor, cursor_agent, gemini_cli, opencode
from tracehouse.parsers.base import SourceParser

PARSERS: dict[str, SourceParser] = {
    claude_code.PROVIDER: claude_code,  # type: ignore[dict-item]
    codex.PROVIDER: codex,  # type: ignore[dict-item]
    cursor.PROVIDER: cursor,  # type: ignore[dict-item]
    gemini_cli.PROVIDER: gemini_cli,  # type: ignore[dict-item]
    opencode.PROVIDER: opencode,  # type: ignore[dict-item]
    cursor_agent.PROVIDER: cursor_agent,  # type: ignore[dict-item]
}
