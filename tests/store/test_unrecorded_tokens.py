"""Schema 17 / migration 0016: a ledger written when unrecorded token counts were stored as 0
and Cursor agent transcripts took a file's time is brought, without reading a source again, to
what a fresh import stores: NULL counts and times, the same fingerprints, and `store verify`
clean, on both backends."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson

from tests.conftest import DATA
from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import TOKEN_COLUMNS, TURNS
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store
from tracehouse.upkeep.verify import verify_store

TOKENS = ", ".join(TOKEN_COLUMNS)


def _import(store: Any, tmp_path: Path) -> None:
    home = tmp_path / "home"
    if not home.exists():
        shutil.copytree(DATA / "cursor_agent" / "home", home)
        shutil.copytree(DATA / "claude" / "home" / ".claude", home / ".claude")
    sources = {"cursor-agent": [home / ".cursor"], "claude-code": [home / ".claude"]}
    assert sync(store, SyncOptions(sources=sources, workers=0)).ok


def _figures(store: Any) -> list[tuple[Any, ...]]:
    turns = store.query(f"SELECT turn_id, fingerprint, {TOKENS} FROM turns ORDER BY turn_id")
    sessions = store.query(
        f"SELECT session_id, {TOKENS}, updated_at, metadata FROM sessions ORDER BY session_id"
    )
    out = [tuple(r.values()) for r in turns]
    for row in sessions:  # metadata as text on SQLite, decoded on PostgreSQL
        metadata = row.pop("metadata")
        decoded = orjson.loads(metadata) if isinstance(metadata, str) else metadata
        out.append((*row.values(), orjson.dumps(decoded, option=orjson.OPT_SORT_KEYS)))
    return out


def test_an_older_ledger_gets_the_figures_a_fresh_import_gives(make_store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fresh = make_store()
    _import(fresh, tmp_path)
    expected = _figures(fresh)
    assert any(r[2] is None for r in expected)  # the Cursor agent recorded no count
    assert any(isinstance(r[2], int) for r in expected)  # Claude Code did
    old = make_store()
    _import(old, tmp_path)
    _as_before(old)
    assert _figures(old) != expected
    address = old.address
    old.close()
    migrated = open_store(address)
    try:
        assert _figures(migrated) == expected
        report = verify_store(migrated)
        assert report.ok, [c for c in report.checks if c.problems]
    finally:
        migrated.close()


def _as_before(store: Any) -> None:
    """Every NULL count 0, each turn fingerprinted over it, and the migration's record undone."""
    unrecorded = " AND ".join(f"{c} IS NULL" for c in TOKEN_COLUMNS)
    rows = store.query(f"SELECT * FROM turns WHERE {unrecorded}")
    zeroed = ", ".join(f"{c} = 0" for c in TOKEN_COLUMNS)
    if store.backend == "sqlite":
        conn, mark = store.conn, "?"
        begin, end = (lambda: conn.execute("BEGIN")), (lambda: conn.execute("COMMIT"))
        undo = "DELETE FROM _sqlite_migrations WHERE name = 'm017_unrecorded_tokens'"
        unflagged = "json_remove(metadata, '$.times')"
    else:
        conn, mark = store.conn, "%s"
        begin, end = (lambda: None), (lambda: conn.commit())
        undo = "DELETE FROM tracehouse_migrations WHERE version = 16"
        unflagged = "(metadata::jsonb - 'times')::json"
    begin()
    for row in rows:
        before = row_fingerprint(TURNS, {**row, **dict.fromkeys(TOKEN_COLUMNS, 0)})
        conn.execute(
            f"UPDATE turns SET {zeroed}, fingerprint = {mark} WHERE turn_id = {mark}",
            (before, row["turn_id"]),
        )
    conn.execute(f"UPDATE sessions SET {zeroed} WHERE total_tokens IS NULL")
    # a Cursor agent transcript took its newest file's modification time, and had no flag
    conn.execute(
        f"UPDATE sessions SET updated_at = '2026-11-27T18:42:28.935Z', metadata = {unflagged}"
        " WHERE source_provider = 'cursor-agent' AND created_at IS NULL"
    )
    conn.execute(undo)
    end()
