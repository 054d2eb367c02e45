"""`export --format sessions-import | import` on every fixture home, into an empty store of
either backend: the same tables, fingerprints, links, labels and aliases included, only the
import stamps aside.
Each home alone, so a parent and its subagents travel together or a link stays dangling on both
sides, as it is in the home."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.exports.checks import CONTENT, _plain
from tracehouse.exports.documents import DocumentOptions, export_documents
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.requests import apply_request_lines
from tracehouse.pipeline.sync import sync
from tracehouse.reports.filters import SessionFilters
from tracehouse.store import open_store
from tracehouse.store.protocol import SessionStore

pytestmark = pytest.mark.corpus

# What a store stamps on import: when, by which host and version, and whether the file is gone.
STAMPS = {"host", "importer_version", "first_imported_at", "last_imported_at", "source_read_at",
          "source_missing_at"}  # fmt: skip


def home_sources(home: Path) -> dict[str, list[Path]]:
    sources = {
        "claude-code": [home / ".claude"] if (home / ".claude" / "projects").is_dir() else [],
        "codex": [home / ".codex"] if (home / ".codex").is_dir() else [],
        "cursor": [p for p in [home / ".config" / "Cursor" / "User"] if p.is_dir()],
        "gemini-cli": [home / ".gemini"] if (home / ".gemini" / "tmp").is_dir() else [],
        "opencode": [p for p in [home / ".local" / "share" / "opencode"] if p.is_dir()],
        "cursor-agent": [p for p in [home / ".cursor"] if p.is_dir()],
    }
    return {k: v for k, v in sources.items() if v}


def tables(store: SessionStore) -> dict[str, list[dict]]:
    """The content tables, and the labels a session was shown under before (the store
    lengthens a label apart from others: an import lengthens it as a backfill did)."""
    found = {
        t: [{k: _plain(v) for k, v in r.items() if k not in STAMPS} for r in store.rows(t)]
        for t in CONTENT
    }
    found["session_aliases"] = sorted(
        (r["alias"], r["session_id"])
        for r in store.query("SELECT alias, session_id FROM session_aliases")
    )
    return found


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_every_home_round_trips_through_sessions_import(  # type: ignore[no-untyped-def]
    corpus: Path, tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    new_dsn = request.getfixturevalue("pg_schemas") if backend == "postgresql" else None
    homes = sorted(p for p in (corpus / "homes").iterdir() if home_sources(p))
    assert len(homes) >= 15  # the homes holding logs of the three tools
    travelled = 0
    for home in homes:
        original = open_store(tmp_path / f"{home.name}.db")
        assert sync(original, SyncOptions(sources=home_sources(home), workers=0)).ok
        stream = io.BytesIO()
        report = export_documents(
            original, tmp_path, DocumentOptions("sessions-import"), SessionFilters(), stream
        )
        if not report.selected:  # settings without a conversation
            original.close()
            continue
        travelled += 1
        copy = open_store(new_dsn() if new_dsn else tmp_path / f"{home.name}-copy.db")
        response = apply_request_lines(copy, stream.getvalue())
        assert response.ok and len(response.results) == report.selected, home.name
        assert tables(copy) == tables(original), home.name
        again = apply_request_lines(copy, stream.getvalue())  # every key replays: no write
        assert again.replayed and tables(copy) == tables(original), home.name
        original.close()
        copy.close()
    assert travelled >= 10
