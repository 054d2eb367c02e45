"""Schema 19 / migration 0018: every provider's tokens in the schema's one convention (input
holds the cache, output the reasoning, total = input + output), and schema 20 / migration 0019:
a title for every session with a prompt. A ledger written before is brought to the figures and
titles a fresh import gives without reading a source again, on both backends.

The ledger before is real: `tests/data/ledgers/before-token-convention.sql` is what tracehouse
4ced0a8 (the release before the convention) wrote for the homes under tests/data, as `.dump`
prints it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA
from tests.data_ledger import HOMES
from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import TOKEN_COLUMNS, TURNS
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store
from tracehouse.upkeep.verify import verify_store

BEFORE = DATA / "ledgers" / "before-token-convention.sql"
TOKENS = ", ".join(TOKEN_COLUMNS)
CONVERTED = ("claude-code", "opencode", "gemini-cli")


def _figures(store: Any) -> dict[str, tuple[Any, ...]]:
    """Each turn's counts and fingerprint, each session's title and counts, by id."""
    out = {
        r["turn_id"]: (r["fingerprint"], *(r[c] for c in TOKEN_COLUMNS))
        for r in store.query(f"SELECT turn_id, fingerprint, {TOKENS} FROM turns")
    }
    for r in store.query(f"SELECT session_id, title, {TOKENS} FROM sessions"):
        out[r["session_id"]] = (r["title"], *(r[c] for c in TOKEN_COLUMNS))
    return out


def _grown(store: Any) -> set[str]:
    """Codex's review turns, which gained their request as a message after the ledger below was
    written: a parser change no migration can make without the source, so only their counts
    are compared."""
    return {r["turn_id"] for r in store.query(
        "SELECT turn_id FROM tool_calls WHERE tool_name = 'review'")}  # fmt: skip


def _before(tmp_path: Path) -> Path:
    path = tmp_path / "before.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(BEFORE.read_text(encoding="utf-8"))
    return path


def test_every_turn_follows_the_convention(data_ledger: Path) -> None:
    store = open_store(data_ledger, create=False)
    try:
        rows = store.query(
            f"SELECT s.source_provider, t.turn_id, {', '.join(f't.{c}' for c in TOKEN_COLUMNS)}"
            " FROM turns t JOIN sessions s ON s.session_id = t.session_id"
            " WHERE t.input_tokens IS NOT NULL"
        )
    finally:
        store.close()
    assert {r["source_provider"] for r in rows} >= {"claude-code", "codex", "gemini-cli",
                                                     "opencode"}  # fmt: skip
    for r in rows:
        assert r["total_tokens"] == r["input_tokens"] + r["output_tokens"], r
        assert r["input_tokens"] >= (r["cached_input_tokens"] or 0) + (
            r["cache_write_tokens"] or 0
        ), r
        assert r["output_tokens"] >= (r["reasoning_tokens"] or 0), r


def test_a_sqlite_ledger_written_before_gets_the_fresh_figures(
    tmp_path: Path, data_ledger: Path
) -> None:
    fresh = open_store(data_ledger, create=False)
    try:
        expected = _figures(fresh)
        grown = _grown(fresh)
    finally:
        fresh.close()
    path = _before(tmp_path)
    with sqlite3.connect(path) as conn:
        old = {r[0]: r[1:] for r in conn.execute(f"SELECT turn_id, {TOKENS} FROM turns")}
        untitled = conn.execute("SELECT count(*) FROM sessions WHERE title IS NULL").fetchone()[0]
    migrated = open_store(path)
    try:
        got = _figures(migrated)
        report = verify_store(migrated)
    finally:
        migrated.close()
    assert report.ok, [c for c in report.checks if c.problems]
    changed = [key for key in old if old[key] != got[key][1:]]
    assert len(changed) >= 10  # the three providers' turns that did not follow it
    assert untitled >= 3  # titled now, as a fresh import titles them (compared below)
    for key in grown:
        assert got[key][1:] == expected[key][1:]
        got[key] = expected[key]
    assert {key: got[key] for key in old} == {key: expected[key] for key in old}
    sessions = [key for key in got if key not in old]
    assert {key: got[key] for key in sessions} == {key: expected[key] for key in sessions}


@pytest.mark.parametrize("make_store", ["postgresql"], indirect=True)
def test_a_postgresql_ledger_written_before_gets_the_fresh_figures(
    make_store: Any, tmp_path: Path
) -> None:
    """A team ledger: the fresh import's counts replaced by the old release's (from the same
    dump, as the old parsers wrote them), the migration's record undone, and opened again."""
    store = make_store()
    sources: dict[str, list[Path]] = {}
    for home in HOMES:
        for provider, folder in (("claude-code", ".claude"), ("codex", ".codex"),
                                 ("gemini-cli", ".gemini"),
                                 ("opencode", ".local/share/opencode")):  # fmt: skip
            if (DATA / home / folder).exists():
                sources.setdefault(provider, []).append(DATA / home / folder)
    assert sync(store, SyncOptions(sources=sources, workers=0)).ok
    expected = _figures(store)
    grown = _grown(store)
    with sqlite3.connect(_before(tmp_path)) as conn:
        conn.row_factory = sqlite3.Row
        turns = [dict(r) for r in conn.execute("SELECT * FROM turns")]
        sessions = [dict(r) for r in conn.execute(f"SELECT session_id, {TOKENS} FROM sessions")]
    sets = ", ".join(f"{c} = %s" for c in TOKEN_COLUMNS)
    conn_ = store.conn  # type: ignore[attr-defined]
    for turn in (t for t in turns if t["turn_id"] not in grown):
        counts = [turn[c] for c in TOKEN_COLUMNS]
        conn_.execute(f"UPDATE turns SET {sets}, fingerprint = %s WHERE turn_id = %s",
                      (*counts, row_fingerprint(TURNS, turn), turn["turn_id"]))  # fmt: skip
    for session in sessions:
        counts = [session[c] for c in TOKEN_COLUMNS]
        conn_.execute(f"UPDATE sessions SET {sets} WHERE session_id = %s",
                      (*counts, session["session_id"]))  # fmt: skip
    conn_.execute("DELETE FROM tracehouse_migrations WHERE version = 18")
    conn_.commit()
    assert _figures(store) != expected
    address = store.address
    store.close()
    migrated = open_store(address)
    try:
        assert _figures(migrated) == expected
        assert verify_store(migrated).ok
    finally:
        migrated.close()
