"""Malformed requests are 4xx with a message, never a 500 (issue #38), on both stores: a NUL in
a label or a key, numbers past the contract's limits, a client that goes away mid-upload."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import DATA
from tests.gateway.server import Gateway, ledger_address, ledger_with_tokens
from tracehouse.gateway.app import GatewayConfig, create_app


@pytest.fixture(params=["sqlite", "postgresql"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    address = ledger_address(request, tmp_path)
    tokens = ledger_with_tokens(address, {"push": ("laptop", "push"), "read": ("viewer", "read")})
    with TestClient(create_app(GatewayConfig(address)), raise_server_exceptions=False) as c:
        c.tokens = tokens
        yield c


def _auth(client: Any, scope: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {client.tokens[scope]}", "Content-Type": "application/json"}


def test_a_nul_anywhere_is_never_a_500(client: Any) -> None:
    client.cookies.set("tracehouse_token", client.tokens["read"])
    for path in ("/s/%00", "/s/%00/version", "/v1/sessions/%00"):
        answer = client.get(path, headers=_auth(client, "read"))
        assert 400 <= answer.status_code < 500, (path, answer.status_code, answer.text)
    assert client.get("/v1/search?q=a%00b", headers=_auth(client, "read")).status_code == 200
    body = {"sourceProvider": "codex", "unitKeys": ["a\u0000b"], "at": "x", "runId": "r"}
    missing = client.post(
        "/v1/units.missing", content=json.dumps(body), headers=_auth(client, "push")
    )
    assert missing.status_code < 500, missing.text  # PostgreSQL cannot hold it: a 400


def test_numbers_past_the_contracts_limits_are_refused(client: Any) -> None:
    request = json.loads((DATA / "draft_request.json").read_bytes())
    request["items"][0]["importedAtMs"] = 2**63
    answer = client.post("/v1/sessions.import", content=json.dumps(request),
                         headers=_auth(client, "push"))  # fmt: skip
    first = answer.json()["results"][0]
    assert first["status"] == "failed" and "importedAtMs" in first["reason"]
    finish = client.post("/v1/runs/r/finish", content=b'{"rejects": false}',
                         headers=_auth(client, "push"))  # fmt: skip
    assert finish.status_code == 422  # a boolean is not a count
    unknown = client.get("/v1/sessions?limit=1&providr=codex", headers=_auth(client, "read"))
    assert unknown.status_code == 400 and "providr" in unknown.json()["detail"]


def test_a_client_that_goes_away_mid_upload_leaves_one_log_line(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.db")
    token = ledger_with_tokens(ledger, {"push": ("laptop", "push")})["push"]
    gateway = Gateway(ledger, tmp_path / "gateway.log").start()
    try:
        with socket.create_connection(("127.0.0.1", gateway.port)) as raw:
            raw.sendall(
                b"POST /v1/sessions.import HTTP/1.1\r\nHost: x\r\n"
                b"Authorization: Bearer " + token.encode() + b"\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n" + b"{" * 100
            )
            time.sleep(0.3)
        time.sleep(0.5)
    finally:
        gateway.stop()
    log = (tmp_path / "gateway.log").read_text()
    assert "Traceback" not in log and "sessions.import" in log
