"""The same ledger whatever the road (issue #64): a backfill, an export imported into an empty
ledger of either backend, the same pushed through a gateway, in any order and batching, and a
backfill pushed through a gateway give the same labels, label bases, aliases, parent and spawn
links and turn and message chains.

Sessions whose labels collide are lengthened apart by the store, with the shorter labels they
were shown under kept as aliases: the export sends each label as its producer hinted it, before
the store lengthened it, and the importing store lengthens it among its own sessions."""

from __future__ import annotations

import functools
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import DATA
from tests.gateway.server import gateway_in_thread
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


# -- every road, any order ----------------------------------------------------------------------

# Lineage of every kind the ledger keeps: labels lengthened apart, an aside's alias, subagents
# linked both ways, a compacted Claude session's chain, Codex reviews, spawned and forked
# children.
CLAUDE = [DATA / "claude" / home / ".claude" for home in ("home", "aside", "released")]
CODEX = [DATA / "codex" / "home" / ".codex"]
LINEAGE = {
    "sessions": "SELECT session_id, label, label_base, parent_session_id, parent_message_id,"
    " spawn_tool_call_id, parent_source_session_id FROM sessions",
    "session_aliases": "SELECT alias, session_id FROM session_aliases",
    "turns": "SELECT turn_id, parent_turn_id FROM turns",
    "messages": "SELECT message_id, parent_message_id FROM messages",
    "tool_calls": "SELECT tool_call_id, spawned_session_id FROM tool_calls",
}


def _lineage(store: SessionStore) -> dict[str, list[tuple[Any, ...]]]:
    return {table: sorted(tuple(r.values()) for r in store.query(sql))
            for table, sql in LINEAGE.items()}  # fmt: skip


@functools.cache
def _backfilled() -> tuple[dict[str, list[tuple[Any, ...]]], tuple[dict[str, Any], ...]]:
    """The backfill's lineage, and its export's requests."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        sources = {"claude-code": [*CLAUDE, _home(root / "alike") / ".claude"], "codex": CODEX}
        store = open_store(root / "backfill.db")
        try:
            assert sync(store, SyncOptions(sources=sources, workers=0)).ok
            stream = io.BytesIO()
            export_documents(store, root, DocumentOptions("sessions-import"), SessionFilters(),
                             stream)  # fmt: skip
            return _lineage(store), tuple(json.loads(x) for x in stream.getvalue().splitlines())
        finally:
            store.close()


def _reordered(requests: tuple[dict[str, Any], ...], order: list[int], size: int) -> bytes:
    """The export's items in `order`, `size` to a request."""
    items = [item for request in requests for item in request["items"]]
    items = [items[i % len(items)] for i in order]
    first = requests[0]
    lines = [json.dumps({**first, "idempotencyKey": f"{first['idempotencyKey']}-{n}",
                         "items": items[at : at + size]})
             for n, at in enumerate(range(0, len(items), size))]  # fmt: skip
    return "\n".join(lines).encode()


@pytest.mark.slow
@pytest.mark.parametrize("road", ["sqlite", "postgresql", "gateway"])
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(data=st.data())
def test_every_road_in_any_order_gives_the_backfills_lineage(
    road: str, data: st.DataObject, request: pytest.FixtureRequest
) -> None:
    """An export imported into an empty ledger — SQLite, PostgreSQL, or pushed through a
    gateway — in any order and any batching gives the labels, label bases, aliases, parent and
    spawn links and turn and message chains the backfill gave."""
    expected, requests = _backfilled()
    count = sum(len(r["items"]) for r in requests)
    order = data.draw(st.permutations(range(count)), label="order")
    size = data.draw(st.integers(1, count), label="items per request")
    lines = _reordered(requests, list(order), size)
    with tempfile.TemporaryDirectory() as folder:
        address = (str(request.getfixturevalue("pg_schemas")()) if road == "postgresql"
                   else str(Path(folder) / "copy.db"))  # fmt: skip
        if road == "gateway":
            with gateway_in_thread(address) as url:
                pusher = open_store(url)
                try:
                    assert apply_request_lines(pusher, lines).ok
                finally:
                    pusher.close()
        else:
            copy = open_store(address)
            try:
                assert apply_request_lines(copy, lines).ok
            finally:
                copy.close()
        held = open_store(address)
        try:
            assert _lineage(held) == expected
        finally:
            held.close()


def test_a_backfill_pushed_through_a_gateway_gives_the_local_backfills_lineage(
    tmp_path: Path,
) -> None:
    expected, _ = _backfilled()
    sources = {"claude-code": [*CLAUDE, _home(tmp_path / "alike") / ".claude"], "codex": CODEX}
    address = str(tmp_path / "gateway.db")
    with gateway_in_thread(address) as url:
        pusher = open_store(url)
        try:
            assert sync(pusher, SyncOptions(sources=sources, workers=0, batch_sessions=3)).ok
        finally:
            pusher.close()
    held = open_store(address)
    try:
        assert _lineage(held) == expected
    finally:
        held.close()
