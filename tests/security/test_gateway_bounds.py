"""One token cannot make the gateway refuse everyone (issue #63): 70 uploads from bob's push
token that declare a body and never send it hold at most their share of the places inside,
a read token is still answered `200` within a second, and each stalled upload is answered
`408` once its body stops coming. Behind a trusted proxy, the sign-in brake counts the real
client, not the proxy."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import pytest

from tests.gateway.server import Gateway, ledger_with_tokens

pytestmark = pytest.mark.slow


def test_stalled_uploads_of_one_token_leave_the_gateway_to_the_others(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.db")
    tokens = ledger_with_tokens(ledger, {"bob": ("bob", "push"), "read": ("viewer", "read")})
    gateway = Gateway(ledger, tmp_path / "gateway.log").start()
    stalled: list[socket.socket] = []
    try:
        for _ in range(70):
            raw = socket.create_connection(("127.0.0.1", gateway.port))
            raw.sendall(b"POST /v1/sessions.import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                        + tokens["bob"].encode() + b"\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 1000\r\n\r\n")  # fmt: skip
            stalled.append(raw)
        time.sleep(1.0)
        headers = {"Authorization": f"Bearer {tokens['read']}"}
        for _ in range(5):
            started = time.perf_counter()
            answer = httpx.get(gateway.url + "/v1/sessions", headers=headers, timeout=15)
            assert answer.status_code == 200
            assert time.perf_counter() - started < 1.0
        # Those let in are told why once their body stops coming; the rest were told to retry.
        statuses = []
        for raw in stalled:
            raw.settimeout(20)
            statuses.append(int(raw.recv(64).split(b" ")[1]))
        assert set(statuses) <= {408, 503} and 408 in statuses and 503 in statuses
        assert httpx.get(gateway.url + "/v1/sessions", headers=headers).status_code == 200
    finally:
        for raw in stalled:
            raw.close()
        gateway.stop()


def test_the_sign_in_brake_counts_the_client_behind_a_trusted_proxy(tmp_path: Path) -> None:
    """The gateway trusts its proxy on 127.0.0.1 (`--forwarded-allow-ips`, as uvicorn does by
    default): ten bad sign-ins from one client behind it lock that client out, not another."""
    ledger = str(tmp_path / "ledger.db")
    ledger_with_tokens(ledger, {"read": ("viewer", "read")})
    gateway = Gateway(ledger, tmp_path / "gateway.log").start()
    try:

        def sign_in(client: str) -> int:
            return httpx.post(gateway.url + "/login", content=b"csrf=x&token=nope",
                              headers={"X-Forwarded-For": client}).status_code  # fmt: skip

        assert [sign_in("203.0.113.7") for _ in range(10)] == [403] * 10
        assert sign_in("203.0.113.7") == 429
        assert sign_in("203.0.113.8") == 403  # not locked out by the other's guesses
    finally:
        gateway.stop()
