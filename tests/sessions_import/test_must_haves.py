"""The `sessions.import` draft's six must-have tests, by the names its test plan gives them, on
both backends, with a request written by hand from the draft (`tests/data/draft_request.json`:
a Claude Code session and its subagent, a Codex session, a Cursor composer)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tests.store.factory import CONTENT, WHEN, snapshot
from tracehouse.cli.app import app
from tracehouse.model import ids
from tracehouse.model.codec import decode_request
from tracehouse.store.protocol import SessionStore

runner = CliRunner()
DRAFT = json.loads((DATA / "draft_request.json").read_text())
PARENT, CHILD = "7d3c2a10-parent", "7d3c2a10-parent/agent-a1f0"


def draft(**envelope: Any) -> dict[str, Any]:
    return {**copy.deepcopy(DRAFT), **envelope}


def send(store: SessionStore, request: dict[str, Any]) -> Any:
    return store.import_batch(decode_request(orjson.dumps(request)))


def test_idempotency_replay(make_store) -> None:  # type: ignore[no-untyped-def]
    """Same batch twice => no duplicate data: the replayed key returns the stored response, and
    the same items under a new key are all skipped."""
    store = make_store()
    first = send(store, draft())
    before = snapshot(store, CONTENT)
    replay = send(store, draft())
    assert replay.replayed and replay.to_json() == first.to_json()
    again = send(store, draft(idempotencyKey="draft-request-2", runId="run-draft-2"))
    assert [r.status for r in again.results] == ["skipped"] * 4
    assert snapshot(store, CONTENT) == before


def test_incremental_update(make_store) -> None:  # type: ignore[no-untyped-def]
    """Same source session, changed fingerprint => only the changed records are written."""
    store = make_store()
    send(store, draft())
    before = snapshot(store, CONTENT, drop=WHEN)
    changed = draft(idempotencyKey="draft-request-2", runId="run-draft-2")
    parent = changed["items"][1]
    parent["sourceSessionFingerprint"] = "aix:parent:2"
    parent["messages"][4]["content"] = "Sorted the items before summing, and added a test."
    response = send(store, changed)
    assert [r.status for r in response.results] == ["skipped", "upserted", "skipped", "skipped"]
    assert response.results[1].rows_written == 2  # the session row and the one message
    after = snapshot(store, CONTENT, drop=WHEN)
    changed_rows = {t: [r for r in after[t] if r not in before[t]] for t in CONTENT}
    assert [len(changed_rows[t]) for t in CONTENT] == [1, 0, 1, 0, 0]
    assert changed_rows["messages"][0]["content"].endswith("added a test.")


def test_partial_failure(make_store) -> None:  # type: ignore[no-untyped-def]
    """One bad item does not block the batch: it fails alone, naming its field."""
    store = make_store()
    request = draft()
    request["items"][2]["toolCalls"][0]["status"] = "exploded"
    response = send(store, request)
    assert [r.status for r in response.results] == ["imported", "imported", "failed", "imported"]
    assert "items[2]: toolCalls[0].status" in response.results[2].reason
    assert "exploded" in response.results[2].reason
    assert not response.ok
    providers = sorted(r["source_provider"] for r in store.rows("sessions"))
    assert providers == ["claude-code", "claude-code", "cursor"]


@pytest.mark.parametrize("child_first", [True, False])
def test_lineage(make_store, child_first: bool) -> None:  # type: ignore[no-untyped-def]
    """Parent/child sessions, the spawning call and turn chains, by source ids, whichever of
    parent and child arrives first, each in a request of its own."""
    store = make_store()
    child, parent = DRAFT["items"][:2]
    for item in [child, parent] if child_first else [parent, child]:
        assert send(store, {"items": [copy.deepcopy(item)]}).ok
    sessions = {r["source_session_id"]: r for r in store.rows("sessions")}
    kid = sessions[CHILD]
    assert kid["is_subagent"] and kid["parent_session_id"] == ids.session_id("claude-code", PARENT)
    assert kid["parent_message_id"] == ids.message_id("claude-code", PARENT, "p-msg-2")
    spawn = ids.tool_call_id("claude-code", PARENT, "toolu_01TaskFind")
    assert kid["spawn_tool_call_id"] == spawn
    (call,) = [r for r in store.rows("tool_calls") if r["tool_call_id"] == spawn]
    assert call["spawned_session_id"] == kid["session_id"]
    turns = {r["source_turn_id"]: r for r in store.rows("turns")}
    assert turns["p-turn-2"]["parent_turn_id"] == turns["p-turn-1"]["turn_id"]
    assert turns["p-turn-1"]["parent_turn_id"] is None
    messages = {r["message_id"]: r["source_message_id"] for r in store.rows("messages")}
    assert messages[turns["p-turn-2"]["response_message_id"]] == "p-msg-5"


def test_tail(tmp_path: Path) -> None:
    """Live updates appear in `sessions list` and open in `sessions show`: a tail request that
    adds a turn to a known session upserts it, and the CLI shows the new message."""
    ledger = tmp_path / "ledger.db"
    first = tmp_path / "backfill.json"
    first.write_text(json.dumps(draft()))
    assert runner.invoke(app, ["import", str(first), "--store", str(ledger), "-q"]).exit_code == 0

    tail = draft(mode="tail", idempotencyKey="tail-1", runId="run-tail-1")
    codex = tail["items"][2]
    codex["sourceSessionFingerprint"] = "aix:codex:2"
    codex["messages"].append({"sourceMessageId": "x-msg-4", "sourceTurnId": "x-turn-2",
                              "role": "assistant", "sequence": 3, "content": "ruff is clean now.",
                              "createdAtMs": 1767229330000})  # fmt: skip
    tail["items"] = [codex]
    path = tmp_path / "tail.json"
    path.write_text(json.dumps(tail))
    result = runner.invoke(app, ["import", str(path), "--store", str(ledger), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["upserted"] == 1

    listed = runner.invoke(app, ["sessions", "list", "--store", str(ledger), "--json"])
    rows = {r["label"]: r for r in json.loads(listed.stdout)}
    label = ids.session_label("codex", codex["sourceSessionId"])
    assert rows[label]["message_count"] == 4
    shown = runner.invoke(app, ["sessions", "show", label, "--store", str(ledger)])
    assert shown.exit_code == 0 and "ruff is clean now." in shown.stdout


def test_mixed_provider(make_store) -> None:  # type: ignore[no-untyped-def]
    """Cursor, Codex and Claude Code in one request: one run, every item imported with its
    provider's label, and the run log counts them all."""
    store = make_store()
    response = send(store, draft())
    assert response.ok and response.run_id == "run-draft-1"
    assert [(r.source_provider, r.status, r.session_label) for r in response.results] == [
        ("claude-code", "imported", "cc-a1f0"),
        ("claude-code", "imported", "checkout-flake"),
        ("codex", "imported", "cx-7e8f9a0b"),
        ("cursor", "imported", "cart-refactor"),
    ]
    (run,) = store.query("SELECT * FROM import_runs WHERE run_id = ?", ["run-draft-1"])
    assert run["imported"] == 4
    counts = store.info().row_counts
    assert (counts["sessions"], counts["turns"], counts["messages"], counts["tool_calls"]) == (
        4, 6, 12, 4
    )  # fmt: skip
    cursor = next(r for r in store.rows("messages") if r["source_message_id"] == "u-bubble-1")
    assert "fileSelections" in str(cursor["context"])
