"""The gateway's `/v1` API in process (FastAPI's test client over the real app and store):
the draft's request and response, tokens and scopes, limits, and cursors kept per machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import DATA
from tracehouse.gateway.app import GatewayConfig, create_app
from tracehouse.gateway.tokens import add_token, list_tokens, revoke_token
from tracehouse.store import open_store


@pytest.fixture
def gateway(tmp_path: Path) -> Any:
    path = str(tmp_path / "gateway.db")
    store = open_store(path)
    tokens = {
        "push": add_token(store, "laptop", "push"),
        "read": add_token(store, "viewer", "read"),
    }
    store.close()
    with TestClient(create_app(GatewayConfig(path, max_request_bytes=200_000))) as client:
        client.tokens = tokens
        client.store_path = path
        yield client


def auth(client: Any, scope: str, **headers: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {client.tokens[scope]}",
        "Content-Type": "application/json",
        **headers,
    }


def draft() -> bytes:
    """The draft's example request, without its own key (the tests give one as a header)."""
    request = json.loads((DATA / "draft_request.json").read_bytes())
    request.pop("idempotencyKey", None)
    return json.dumps(request).encode()


def test_health_needs_no_token_and_everything_else_does(gateway: Any) -> None:
    assert gateway.get("/v1/health").json()["ok"] is True
    for method, path in [("GET", "/v1/sessions"), ("POST", "/v1/sessions.import"),
                         ("GET", "/v1/search?q=x"), ("GET", "/v1/sessions/x")]:  # fmt: skip
        answer = gateway.request(method, path)
        assert answer.status_code == 401, path
        assert answer.headers["www-authenticate"] == "Bearer"
    bad = {"Authorization": "Bearer thk_not-a-token"}
    assert gateway.get("/v1/sessions", headers=bad).status_code == 401


def test_scopes_are_enforced(gateway: Any) -> None:
    assert gateway.get("/v1/sessions", headers=auth(gateway, "push")).status_code == 403
    answer = gateway.post("/v1/sessions.import", content=draft(), headers=auth(gateway, "read"))
    assert answer.status_code == 403


def test_a_draft_request_imports_and_replays_by_its_key(gateway: Any) -> None:
    headers = auth(gateway, "push", **{"Idempotency-Key": "k-1"})
    first = gateway.post("/v1/sessions.import", content=draft(), headers=headers)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["ok"] and body["imported"] == len(json.loads(draft())["items"])
    again = gateway.post("/v1/sessions.import", content=draft(), headers=headers)
    assert again.json()["replayed"] is True and again.json()["results"] == body["results"]
    other = json.loads(draft())
    other["source"] = "something else"
    conflict = gateway.post("/v1/sessions.import", content=json.dumps(other), headers=headers)
    assert conflict.status_code == 409
    other["idempotencyKey"] = "k-2"
    differ = gateway.post("/v1/sessions.import", content=json.dumps(other), headers=headers)
    assert differ.status_code == 400 and "differ" in differ.json()["detail"]
    label = body["results"][0]["sessionLabel"]
    listed = gateway.get("/v1/sessions", headers=auth(gateway, "read")).json()["sessions"]
    assert label in [s["label"] for s in listed]
    assert {s["host"] for s in listed} == {"laptop"}  # the token that sent them
    one = gateway.get(f"/v1/sessions/{label}", headers=auth(gateway, "read")).json()
    assert one["item"]["sourceSessionId"] == body["results"][0]["sourceSessionId"]
    assert gateway.get("/v1/sessions/nope", headers=auth(gateway, "read")).status_code == 404


def test_malformed_and_oversized_requests_are_named(gateway: Any) -> None:
    headers = auth(gateway, "push")
    broken = gateway.post("/v1/sessions.import", content=b"{not json", headers=headers)
    assert broken.status_code == 400 and "not valid JSON" in broken.json()["detail"]
    unknown = gateway.post("/v1/sessions.import", content=b'{"items": [], "x": 1}',
                           headers=headers)  # fmt: skip
    assert unknown.status_code == 400 and "`x`" in unknown.json()["detail"]
    huge = gateway.post("/v1/sessions.import", content=b" " * 300_000, headers=headers)
    assert huge.status_code == 413
    item = json.loads(draft())
    item["items"][0]["messages"][0]["role"] = 42
    failed = gateway.post("/v1/sessions.import", content=json.dumps(item), headers=headers).json()
    assert failed["failed"] == 1
    assert failed["results"][0]["reason"].startswith("items[0]: messages[0].role:")


def test_each_machine_keeps_its_own_cursors(gateway: Any) -> None:
    store = open_store(gateway.store_path)
    try:
        gateway.tokens.update({m: add_token(store, m, "push") for m in ("alice", "bob")})
    finally:
        store.close()

    def push(machine: str, offset: int) -> None:
        cursor = {"sourceProvider": "codex", "unitKey": "/home/dev/a.jsonl",
                  "cursor": {"offset": offset}}  # fmt: skip
        request = {"runId": "r", "mode": "backfill", "items": [], "cursors": [cursor]}
        headers = auth(gateway, machine, **{"X-Tracehouse-Machine": machine})
        answer = gateway.post("/v1/sessions.import", content=json.dumps(request), headers=headers)
        assert answer.status_code == 200, answer.text

    def cursors(machine: str) -> dict[str, Any]:
        headers = auth(gateway, machine)  # the token says which machine
        body = {"sourceProvider": "codex"}
        answer = gateway.post("/v1/cursors", content=json.dumps(body), headers=headers)
        return answer.json()["cursors"]  # type: ignore[no-any-return]

    push("alice", 10)
    push("bob", 99)
    assert cursors("alice") == {"/home/dev/a.jsonl": {"offset": 10}}
    assert cursors("bob") == {"/home/dev/a.jsonl": {"offset": 99}}
    assert cursors("push") == {}  # the fixture's token, machine "laptop"
    headers = auth(gateway, "push", **{"X-Tracehouse-Machine": "../etc"})
    assert gateway.post("/v1/cursors", content=b'{"sourceProvider": "codex"}',
                        headers=headers).status_code == 422  # fmt: skip


def test_tokens_are_kept_hashed_and_can_be_revoked(gateway: Any) -> None:
    store = open_store(gateway.store_path)
    try:
        raw = json.dumps(store.query("SELECT * FROM api_tokens"))
        assert gateway.tokens["push"] not in raw and gateway.tokens["read"] not in raw
        assert [t["name"] for t in list_tokens(store)] == ["laptop", "viewer"]
        assert revoke_token(store, "viewer")
    finally:
        store.close()
    assert gateway.get("/v1/sessions", headers=auth(gateway, "read")).status_code == 401


def test_search_answers_with_highlights(gateway: Any) -> None:
    gateway.post("/v1/sessions.import", content=draft(), headers=auth(gateway, "push"))
    word = json.loads(draft())["items"][0]["messages"][0]["content"].split()[0]
    hits = gateway.get("/v1/search", params={"q": word}, headers=auth(gateway, "read")).json()
    assert hits["hits"] and hits["hits"][0]["highlights"]


def test_a_transcript_reads_as_sessions_show_or_as_markdown(gateway: Any) -> None:
    gateway.post("/v1/sessions.import", content=draft(), headers=auth(gateway, "push"))
    read = auth(gateway, "read")
    listed = gateway.get("/v1/sessions", headers=read).json()["sessions"]
    parent = next(s for s in listed if not s["isSubagent"])
    path = f"/v1/sessions/{parent['label']}/transcript"
    text = gateway.get(path, headers=read).json()
    assert text["format"] == "text" and text["label"] == parent["label"]
    assert text["text"].startswith("# ") and text["parent"] is None
    children = [c["label"] for c in text["children"]]
    for child in children:  # and back up from each
        above = gateway.get(f"/v1/sessions/{child}/transcript", headers=read).json()["parent"]
        assert above["label"] == parent["label"]
    markdown = gateway.get(path, params={"format": "markdown"}, headers=read).json()
    assert markdown["text"] != text["text"] and markdown["text"].startswith("# ")
    refused = [gateway.get(path, params={"format": "pdf"}, headers=read),
               gateway.get("/v1/sessions/no-such/transcript", headers=read),
               gateway.get(path)]  # fmt: skip
    assert [r.status_code for r in refused] == [422, 404, 401]


def test_the_list_page_shows_where_each_session_came_from_and_one_line_titles(
    gateway: Any,
) -> None:
    from tracehouse.model.fields import cap

    request = json.loads(draft())
    request["items"][0]["session"]["title"] = cap("a first prompt that runs on " * 40, 200)
    answer = gateway.post("/v1/sessions.import", content=json.dumps(request),
                          headers=auth(gateway, "push"))  # fmt: skip
    assert answer.status_code == 200, answer.text
    gateway.cookies.set("tracehouse_token", gateway.tokens["read"])
    page = gateway.get("/").text
    rows = page.split('<tbody id="rows">', 1)[1]
    assert '<td class="nowrap" data-label="machine">laptop</td>' in rows  # who pushed them
    assert "[cut:" not in rows and "a first prompt that runs on a first" in rows
    title = rows.split("a first prompt", 1)[1].split("</a>", 1)[0]
    assert len(title) < 80 and title.endswith("…")


def test_the_gateway_reconnects_after_its_database_drops_the_connections(
    pg_schemas: Any, pg_server: Any
) -> None:
    import psycopg

    dsn = pg_schemas()
    store = open_store(dsn)
    names = {"push": "laptop", "read": "viewer"}
    tokens = {scope: add_token(store, name, scope) for scope, name in names.items()}
    store.close()
    with TestClient(create_app(GatewayConfig(dsn))) as client:
        client.tokens = tokens
        assert client.get("/v1/health").status_code == 200
        listed = client.get("/v1/sessions", headers=auth(client, "read"))
        assert listed.status_code == 200
        state = client.app.state  # the health check's store too
        pids = [s.conn.info.backend_pid for s in (*state.pool.opened, *state.probe.opened)]
        with psycopg.connect(pg_server.dsn, autocommit=True) as admin:  # a database restart
            admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (pids,))
        first = client.get("/v1/health")
        assert first.status_code == 503 and first.headers["Retry-After"] == "1"
        assert "did not answer" in first.json()["detail"]
        assert client.get("/v1/health").status_code == 200  # a new connection
        # The requests' own store died too: its next request is a 503 the pusher retries, and
        # the one after gets a new connection.
        pushed = client.post("/v1/sessions.import", content=draft(), headers=auth(client, "push"))
        assert pushed.status_code == 503 and "did not answer" in pushed.json()["detail"]
        pushed = client.post("/v1/sessions.import", content=draft(), headers=auth(client, "push"))
        assert pushed.status_code == 200, pushed.text
