"""On every fixture home: the token convention (total = input + output, input ≥ its cached
part, output ≥ its reasoning) on every turn and session of every provider, and a title on every
main session that has a prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracehouse.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.corpus


def test_every_turn_and_session_follows_the_token_convention(all_homes_ledger: Path) -> None:
    store = SqliteStore(all_homes_ledger, migrate=False)
    try:
        providers = set()
        for table in ("turns t JOIN sessions s ON s.session_id = t.session_id", "sessions t"):
            provider = "s.source_provider" if table.startswith("turns") else "t.source_provider"
            for r in store.query(
                f"SELECT {provider} AS provider, t.input_tokens, t.output_tokens,"
                " t.cached_input_tokens, t.cache_write_tokens, t.reasoning_tokens,"
                f" t.total_tokens FROM {table} WHERE t.input_tokens IS NOT NULL"
            ):
                providers.add(r["provider"])
                assert r["total_tokens"] == r["input_tokens"] + r["output_tokens"], r
                assert r["input_tokens"] >= (r["cached_input_tokens"] or 0), r
                assert r["output_tokens"] >= (r["reasoning_tokens"] or 0), r
    finally:
        store.close()
    assert providers >= {"claude-code", "codex", "gemini-cli", "opencode", "cursor"}


def test_a_session_with_a_prompt_has_a_title(all_homes_ledger: Path) -> None:
    store = SqliteStore(all_homes_ledger, migrate=False)
    try:
        blank = store.query(
            "SELECT s.source_provider, s.source_path FROM sessions s WHERE NOT s.is_subagent"
            " AND (s.title IS NULL OR s.title = '') AND EXISTS (SELECT 1 FROM messages m"
            " WHERE m.session_id = s.session_id AND m.message_type = 'user'"
            " AND m.content IS NOT NULL AND trim(m.content) != '')"
        )
        titled = store.query("SELECT count(*) AS n FROM sessions WHERE title IS NOT NULL")
    finally:
        store.close()
    assert blank == []
    assert titled[0]["n"] >= 40
