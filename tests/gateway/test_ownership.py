"""Two laptops behind one gateway (issue #38): every way one machine's token could write or read
the other's sessions, rows, cursors, runs and idempotency keys is refused, and nothing of the
owner's changes. On SQLite and PostgreSQL behind the gateway."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.gateway.server import ledger_address, ledger_with_tokens
from tests.gateway.test_api import draft
from tracehouse.gateway.app import GatewayConfig, create_app
from tracehouse.store import open_store

MACHINES = ("alice-laptop", "bob-laptop")


@pytest.fixture(params=["sqlite", "postgresql"])
def team(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    address = ledger_address(request, tmp_path)
    tokens = ledger_with_tokens(address, {**{m: (m, "push") for m in MACHINES},
                                          "admin": ("ops", "admin"),
                                          "viewer": ("viewer", "read")})  # fmt: skip
    with TestClient(create_app(GatewayConfig(address))) as client:
        client.tokens = tokens
        client.address = address
        yield client


def _headers(team: Any, who: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {team.tokens[who]}", "Content-Type": "application/json",
            **extra}  # fmt: skip


def _request(text: str) -> dict[str, Any]:
    request = json.loads(draft())
    request["items"] = request["items"][:1]
    item = request["items"][0]
    item.pop("sourceSessionFingerprint", None)  # worked out from the content instead
    for message in item["messages"]:
        message["content"] = f"{text}: {message['content']}"
    return request


def _push(team: Any, who: str, request: dict[str, Any], **extra: str) -> Any:
    return team.post("/v1/sessions.import", content=json.dumps(request),
                     headers=_headers(team, who, **extra))  # fmt: skip


def _ledger(team: Any) -> dict[str, Any]:
    store = open_store(team.address)
    try:
        return {
            "sessions": sorted((s["session_id"], s["host"]) for s in store.rows("sessions")),
            "messages": sorted((m["message_id"], m["content"]) for m in store.rows("messages")),
            "watermarks": sorted(w["unit_key"] for w in store.rows("watermarks")),
            "runs": sorted(
                (r["run_id"], r["rejects"], r["error"]) for r in store.rows("import_runs")
            ),
        }
    finally:
        store.close()


def test_a_session_belongs_to_the_machine_that_pushed_it_first(team: Any) -> None:
    assert _push(team, "bob-laptop", _request("bob's words")).status_code == 200
    before = _ledger(team)
    assert {host for _, host in before["sessions"]} == {"bob-laptop"}
    answer = _push(team, "alice-laptop", _request("alice's words"))  # bob's session id
    assert answer.status_code == 200
    [result] = answer.json()["results"]
    assert result["status"] == "failed" and "belongs to machine 'bob-laptop'" in result["reason"]
    assert _ledger(team) == {**before, "runs": _ledger(team)["runs"]}  # bob's rows unchanged
    assert _push(team, "bob-laptop", _request("bob again")).json()["results"][0]["status"] in (
        "upserted", "imported")  # fmt: skip


def test_a_token_writes_as_its_own_machine_only(team: Any) -> None:
    assert _push(team, "bob-laptop", _request("bob")).status_code == 200
    before = _ledger(team)
    as_bob = {"X-Tracehouse-Machine": "bob-laptop"}
    answer = _push(team, "alice-laptop", _request("alice"), **as_bob)
    assert answer.status_code == 403 and "writes as machine 'alice-laptop'" in answer.text
    for path, body in [
        ("/v1/cursors", {"sourceProvider": "codex"}),
        ("/v1/units.missing", {"sourceProvider": "claude-code", "unitKeys": ["/x"],
                               "at": "2026-01-01T00:00:00Z", "runId": "r"}),
        ("/v1/rejects.unresolved", {"sourceProvider": "codex", "location": "file"}),
    ]:  # fmt: skip
        refused = team.post(path, content=json.dumps(body),
                            headers=_headers(team, "alice-laptop", **as_bob))  # fmt: skip
        assert refused.status_code == 403, path
    assert _ledger(team) == before


def test_cursors_missing_flags_and_runs_stay_with_their_machine(team: Any) -> None:
    cursor = {"sourceProvider": "codex", "unitKey": "/home/bob/a.jsonl", "cursor": {"o": 9}}
    push = {"runId": "r1", "mode": "backfill", "items": [], "cursors": [cursor]}
    as_bob = {"X-Tracehouse-Machine": "bob-laptop"}
    assert _push(team, "bob-laptop", push, **as_bob).status_code == 200
    assert _push(team, "bob-laptop", _request("bob")).status_code == 200
    own = team.post("/v1/cursors", content=b'{"sourceProvider": "codex"}',
                    headers=_headers(team, "bob-laptop"))  # fmt: skip
    assert own.json()["cursors"] == {"/home/bob/a.jsonl": {"o": 9}}
    theirs = team.post("/v1/cursors", content=b'{"sourceProvider": "codex"}',
                       headers=_headers(team, "alice-laptop"))  # fmt: skip
    assert theirs.json()["cursors"] == {}
    before = _ledger(team)
    missing = {"sourceProvider": "claude-code", "unitKeys": ["/home/bob/a.jsonl"],
               "at": "2026-01-01T00:00:00Z", "runId": "r1"}  # fmt: skip
    flagged = team.post("/v1/units.missing", content=json.dumps(missing),
                        headers=_headers(team, "alice-laptop"))  # fmt: skip
    assert flagged.json()["flagged"] == 0
    team.post("/v1/runs", content=b'{"runId": "r1", "mode": "backfill"}',
              headers=_headers(team, "bob-laptop"))  # fmt: skip
    finish = {"rejects": 999, "error": "written by alice"}
    team.post("/v1/runs/r1/finish", content=json.dumps(finish),
              headers=_headers(team, "alice-laptop"))  # fmt: skip
    after = _ledger(team)
    bobs = [r for r in after["runs"] if r[0].startswith("bob-laptop/")]
    assert bobs and all(r[1] != 999 for r in bobs)
    assert after["sessions"] == before["sessions"] and after["messages"] == before["messages"]


def test_an_idempotency_key_is_kept_per_token(team: Any) -> None:
    key = {"Idempotency-Key": "shared-key-1"}
    first = _push(team, "bob-laptop", _request("bob"), **key)
    assert first.status_code == 200 and not first.json()["replayed"]
    other = _push(team, "alice-laptop", _request("alice"), **key)
    assert other.status_code == 200 and not other.json()["replayed"]
    assert other.json()["results"][0]["status"] == "failed"  # bob's session, not his response
    again = _push(team, "bob-laptop", _request("bob"), **key)
    assert again.json()["replayed"]


def test_an_admin_moves_a_replaced_laptops_sessions(team: Any) -> None:
    assert _push(team, "bob-laptop", _request("bob")).status_code == 200
    move = {"fromMachine": "bob-laptop", "toMachine": "alice-laptop"}
    refused = team.post("/v1/sessions.move", content=json.dumps(move),
                        headers=_headers(team, "bob-laptop"))  # fmt: skip
    assert refused.status_code == 403
    moved = team.post("/v1/sessions.move", content=json.dumps(move),
                      headers=_headers(team, "admin"))  # fmt: skip
    assert moved.json() == {"moved": 1}
    assert {h for _, h in _ledger(team)["sessions"]} == {"alice-laptop"}
    assert _push(team, "alice-laptop", _request("alice")).json()["results"][0]["status"] != (
        "failed")  # fmt: skip
    assert _push(team, "bob-laptop", _request("bob")).json()["results"][0]["status"] == "failed"


def test_whoami_names_the_machine_a_push_token_writes_as(team: Any) -> None:
    who = team.get("/v1/whoami", headers=_headers(team, "bob-laptop")).json()
    assert who == {
        "name": "bob-laptop",
        "scope": "push",
        "machine": "bob-laptop",
        "unredacted": False,
    }
    assert team.get("/v1/whoami", headers=_headers(team, "viewer")).json()["machine"] is None
    read = _push(team, "viewer", _request("viewer"))
    assert read.status_code == 403


def test_a_push_token_of_an_older_gateway_without_a_machine_is_told_what_to_do(
    team: Any,
) -> None:
    store = open_store(team.address)
    try:
        store.write(lambda tx: tx.execute("UPDATE api_tokens SET machine = NULL", []))
    finally:
        store.close()
    answer = _push(team, "bob-laptop", copy.deepcopy(_request("bob")))
    assert answer.status_code == 403 and "--machine" in answer.text
