"""The parsers, listed explicitly (STYLE "Source interface"): provider name → module."""

from __future__ import annotations

from tracehouse.parsers import claude_code
from tracehouse.parsers.base import SourceParser

PARSERS: dict[str, SourceParser] = {
    claude_code.PROVIDER: claude_code,  # type: ignore[dict-item]
}
