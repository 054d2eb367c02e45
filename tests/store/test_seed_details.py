"""What a `sessions.import` request says is kept: its `source` on the run, each item's
`importedAtMs` as when its producer read it, a tool call's metadata (its exit code) and a cited
source's time — on both backends, and from the parsers that record them."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

from tests.conftest import DATA
from tests.store.factory import T0, batch, item
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore


def test_a_request_keeps_its_source_and_times(store) -> None:  # type: ignore[no-untyped-def]
    first = item("s1", 2)
    first["importedAtMs"] = T0 + 5_000
    first["toolCalls"][0]["metadataJson"] = {"exit_code": 2}
    first["sources"][0]["createdAtMs"] = T0 + 1_000
    second = item("s2", 2)  # importedAtMs 0: the producer did not say
    sent = batch([first, second], source="my-exporter")
    assert store.import_batch(sent).ok
    (run,) = store.query("SELECT source FROM import_runs WHERE run_id = ?", [sent.run_id])
    assert run["source"] == "my-exporter"
    read = {r["source_session_id"]: r["source_read_at"] for r in store.rows("sessions")}
    assert read == {"s1": "2026-01-01T00:00:05.000Z", "s2": None}
    metadata = [
        orjson.loads(r["metadata"]) if isinstance(r["metadata"], str) else r["metadata"]
        for r in store.rows("tool_calls")
        if r["metadata"] is not None
    ]
    assert metadata == [{"exit_code": 2}]
    cited = {r["created_at"] for r in store.rows("message_sources")}
    # one as the request says; one left out, when the message that cites it was written (#64)
    assert cited == {"2026-01-01T00:00:01.000Z", "2026-01-01T00:00:00.000Z"}


def test_parsers_record_exit_codes_and_when_a_source_was_cited(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    shutil.copytree(DATA / "codex" / "home" / ".codex", home / ".codex")
    store = SqliteStore(tmp_path / "ledger.db")
    try:
        sources = {"claude-code": [home / ".claude"], "codex": [home / ".codex"]}
        assert sync(store, SyncOptions(sources=sources, workers=0)).ok
        codes = store.query(
            "SELECT s.source_provider AS p, t.metadata FROM tool_calls t JOIN sessions s"
            " USING (session_id) WHERE t.metadata IS NOT NULL"
        )
        by_provider = {r["p"] for r in codes if "exit_code" in orjson.loads(r["metadata"])}
        assert "codex" in by_provider
        failed = store.query(
            "SELECT metadata, error FROM tool_calls WHERE status = 'failed' AND result LIKE"
            " 'Exit code %'"
        )
        assert failed  # Claude Code writes a failed command's status into its text alone
        for row in failed:
            assert orjson.loads(row["metadata"])["exit_code"] == int(row["error"].split()[2])
        cited = store.query("SELECT created_at FROM message_sources")
        assert cited and all(r["created_at"] for r in cited)
        assert all(r["source_read_at"] for r in store.rows("sessions"))
    finally:
        store.close()


def test_a_bare_session_gets_the_times_and_title_a_backfill_would_give(store) -> None:  # type: ignore[no-untyped-def]
    """An item that leaves out `createdAtMs`, `updatedAtMs` and `title` has them from its own
    rows: its first and last message, its first prompt (issue #64); a copy keeps them bare."""
    bare = item("s1", 3, text="Fix the flaky checkout test")
    for field in ("title", "createdAtMs"):
        bare["session"].pop(field)
    assert store.import_batch(batch([bare])).ok
    (row,) = store.query("SELECT created_at, updated_at, title FROM sessions")
    assert row["created_at"] == "2026-01-01T00:00:00.000Z"
    assert row["updated_at"] == "2026-01-01T00:00:02.000Z"
    assert row["title"] == "Fix the flaky checkout test 0"
    copied = item("s2", 3)
    for field in ("title", "createdAtMs"):
        copied["session"].pop(field)
    assert store.import_batch(batch([copied], mode="migration")).ok
    (kept,) = store.query("SELECT created_at, title FROM sessions WHERE source_session_id = 's2'")
    assert kept["created_at"] is None and kept["title"] is None
