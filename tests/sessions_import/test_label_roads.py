"""A ledger's labels whatever the road (issue #64): sessions whose labels collide are lengthened
apart by the store, with the shorter labels they were shown under kept as aliases. An export
imported into an empty ledger of either backend gives the same labels, bases and aliases as the
backfill it came from: the export sends each label as its producer hinted it, before the store
lengthened it, and the importing store lengthens it among its own sessions."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tracehouse.exports.documents import DocumentOptions, export_documents
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.requests import apply_request_lines
from tracehouse.pipeline.sync import sync
from tracehouse.reports.filters import SessionFilters
from tracehouse.store import open_store
from tracehouse.store.protocol import SessionStore

# Three Claude Code sessions whose ids begin alike: all three would be cc-abcdef12.
IDS = [f"abcdef12-{n}000-4000-8000-00000000000{n}" for n in (1, 2, 3)]


def _home(root: Path) -> Path:
    project = root / ".claude" / "projects" / "-tmp-demo"
    project.mkdir(parents=True)
    for n, sid in enumerate(IDS, 1):
        line = {"type": "user", "uuid": f"u{n}", "parentUuid": None, "sessionId": sid,
                "cwd": "/tmp/demo", "version": "2.1.114",
                "timestamp": f"2026-03-0{n}T10:00:00.000Z",
                "message": {"role": "user", "content": f"task number {n}"}}  # fmt: skip
        (project / f"{sid}.jsonl").write_text(json.dumps(line) + "\n")
    return root


def _labels(store: SessionStore) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    sessions = store.query("SELECT session_id, label, label_base FROM sessions")
    aliases = store.query("SELECT alias, session_id FROM session_aliases")
    return (sorted((r["session_id"], r["label"], r["label_base"]) for r in sessions),
            sorted((r["alias"], r["session_id"]) for r in aliases))  # fmt: skip


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_export_imported_has_the_labels_and_aliases_of_the_backfill(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    home = _home(tmp_path / "home")
    original = open_store(tmp_path / "original.db")
    assert sync(original, SyncOptions(sources={"claude-code": [home / ".claude"]})).ok
    labels, aliases = _labels(original)
    assert len({label for _, label, _ in labels}) == 3  # lengthened apart
    assert {base for _, _, base in labels} == {"cc-abcdef12"} and aliases  # shown before
    stream = io.BytesIO()
    report = export_documents(
        original, tmp_path, DocumentOptions("sessions-import"), SessionFilters(), stream
    )
    assert report.selected == 3
    target = request.getfixturevalue("pg_schemas")() if backend == "postgresql" else None
    copy = open_store(target or tmp_path / "copy.db")
    try:
        assert apply_request_lines(copy, stream.getvalue()).ok
        assert _labels(copy) == (labels, aliases)
    finally:
        copy.close()
        original.close()
