"""A title for every session that has a prompt (schema 20 / migration 0019).

Claude Code, Codex and Gemini CLI sessions whose agent gave no title were stored without one
(32 of the fixtures' 40 Claude Code sessions). Parsers now take the first prompt a person wrote
(`model/titles.py`); a ledger written before gets the same titles from the prompts it already
holds, without reading a source again. A Gemini CLI subagent keeps none, as a fresh import does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tracehouse.model.titles import title_from_prompts

TITLED = ("claude-code", "codex", "gemini-cli")


def add_titles(
    query: Callable[[str, Sequence[Any]], Sequence[Sequence[Any]]],
    execute_many: Callable[[str, list[tuple[Any, ...]]], object],
    mark: str,
) -> int:
    """Titles for the untitled sessions, through a backend's own calls; returns how many."""
    marks = ", ".join([mark] * len(TITLED))
    rows = query(
        "SELECT m.session_id, m.content FROM messages m JOIN sessions s"
        " ON s.session_id = m.session_id WHERE s.title IS NULL"
        f" AND s.source_provider IN ({marks}) AND m.message_type = 'user'"
        " AND NOT (s.source_provider = 'gemini-cli' AND s.is_subagent)"
        " ORDER BY m.session_id, m.seq",
        list(TITLED),
    )
    prompts: dict[str, list[str | None]] = {}
    for session_id, content in rows:
        prompts.setdefault(session_id, []).append(content)
    updates = [(title, session_id) for session_id, texts in prompts.items()
               if (title := title_from_prompts(texts))]  # fmt: skip
    if updates:
        execute_many(f"UPDATE sessions SET title = {mark} WHERE session_id = {mark}", updates)
    return len(updates)
