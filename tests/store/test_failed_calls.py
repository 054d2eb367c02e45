"""One meaning for a failed call (issue #64): `result` is what the tool gave back whatever its
status, `error` why a failed call failed. Every source of tests/data reads so, and a ledger
written before (a failed call's output in `error` alone) is migrated on either store: results
filled from the errors, each row with a fresh import's fingerprint, and found by search."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.store.factory import batch, item
from tracehouse.store import open_store
from tracehouse.store.failed_calls import OUTPUT_IN_ERROR
from tracehouse.upkeep.verify import verify_store

WORD = "xyzzyfailure"


def test_every_source_gives_a_failed_call_its_result(data_ledger: Path) -> None:
    store = open_store(data_ledger, create=False)
    try:
        rows = store.query(
            "SELECT s.source_provider AS provider, t.result, t.error FROM tool_calls t"
            " JOIN sessions s ON s.session_id = t.session_id WHERE t.status = 'failed'"
        )
    finally:
        store.close()
    assert {"claude-code", "codex", "opencode"} <= {r["provider"] for r in rows}
    # a call with no output (its turn was aborted) has only the reason; none with output
    # has it in `error` alone
    bare = [r for r in rows if r["error"] and r["result"] is None]
    assert all(r["provider"] not in OUTPUT_IN_ERROR for r in bare), bare
    assert all(r["provider"] == "codex" and "turn aborted" in r["error"] for r in bare), bare


def test_the_kits_sources_give_a_failed_call_its_output_as_both() -> None:
    """Qwen Code, Pi, Kimi CLI, Copilot CLI, Crush and Cline report a result through the kit."""
    from tracehouse.parsers.kit.conversation import Conversation

    talk = Conversation("pi", "s1", "/tmp/s1.jsonl", 1 << 20)
    talk.prompt("p", "run it", "2026-01-01T00:00:00Z")
    talk.call("c1", "bash", {"command": "false"}, "2026-01-01T00:00:01Z")
    talk.result("c1", "exit status 1", "2026-01-01T00:00:02Z", failed=True)
    talk.call("c2", "bash", {"command": "true"}, "2026-01-01T00:00:03Z")
    talk.result("c2", "done", "2026-01-01T00:00:04Z")
    names = talk.calls.table.names
    rows = [dict(zip(names, values, strict=True)) for values in talk.calls.tuples()]
    failed, done = sorted(rows, key=lambda r: r["seq"])
    assert (failed["status"], failed["result"], failed["error"]) == (
        "failed",
        "exit status 1",
        "exit status 1",
    )
    assert (done["status"], done["result"], done["error"]) == ("completed", "done", None)


def _failed_item() -> dict:
    made = item("f1", 2)
    made["sourceProvider"] = "pi"
    made["toolCalls"][0] |= {"status": "failed", "resultJson": None,
                             "error": f"command failed: {WORD} not found"}  # fmt: skip
    return made


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_ledger_written_before_is_given_the_results(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    address = (str(tmp_path / "old.db") if backend == "sqlite"
               else request.getfixturevalue("pg_schemas")())  # fmt: skip
    store = open_store(address)
    try:
        (done,) = store.import_batch(batch([_failed_item()])).results
        assert done.status == "imported", done.reason
        (row,) = store.query("SELECT result, error FROM tool_calls")
        assert row["result"] is None  # as the contract's items and older parsers left it
    finally:
        store.close()
    _as_before_the_migration(backend, address)
    store = open_store(address)  # migrates
    try:
        (row,) = store.query("SELECT result, error FROM tool_calls")
        assert row["result"] == row["error"] == f"command failed: {WORD} not found"
        report = verify_store(store)
        assert report.ok, [c for c in report.checks if c.problems]
        hits = store.search(WORD)
        assert hits and all(WORD in (h.snippet or "") for h in hits)
    finally:
        store.close()
    if backend == "sqlite":
        with sqlite3.connect(address) as conn:
            conn.execute("INSERT INTO tool_calls_fts(tool_calls_fts) VALUES ('integrity-check')")


def _as_before_the_migration(backend: str, address: str) -> None:
    if backend == "sqlite":
        with sqlite3.connect(address) as conn:
            conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm022_failed_call_results'")
        return
    import psycopg

    with psycopg.connect(address) as conn:
        conn.execute("DELETE FROM tracehouse_migrations WHERE version = 20")
