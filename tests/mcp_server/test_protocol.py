"""The server over the wire, driven by the SDK's own client: over stdio on both backends (the
command an agent starts), and over streamable HTTP through a real gateway with its tokens."""

from __future__ import annotations

from pathlib import Path

import httpx
import httpx2
from mcp.client.streamable_http import streamable_http_client

from tests.mcp_server.protocol import check, converse, stdio


def test_stdio_answers_every_tool(ledger_address: str) -> None:
    check(converse(stdio(ledger_address)))


def test_stdio_on_a_missing_ledger_says_so(tmp_path: Path) -> None:
    import subprocess
    import sys

    command = [sys.executable, "-m", "tracehouse.cli.app", "mcp", "--store",
               str(tmp_path / "none.db")]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2 and "no ledger here" in done.stderr and not done.stdout


def test_the_gateway_serves_the_tools_to_a_read_token(gateway) -> None:  # type: ignore[no-untyped-def]
    served, tokens = gateway
    # the SDK's client speaks httpx2
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens['read']}"}, timeout=30)
    check(converse(streamable_http_client(served.url + "/mcp", http_client=http)))  # type: ignore[arg-type]


def test_the_gateway_refuses_other_callers(gateway) -> None:  # type: ignore[no-untyped-def]
    served, tokens = gateway
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    cases = [
        ({}, 401),
        ({"Authorization": "Bearer not-a-token"}, 401),
        ({"Authorization": f"Bearer {tokens['admin']}"}, 403),
    ]
    for extra, status in cases:
        answer = httpx.post(served.url + "/mcp", json=ping, headers={**headers, **extra})
        assert answer.status_code == status, (extra, answer.text)
    # the web view's cookie is no way in: only the Authorization header counts
    cookie = httpx.post(served.url + "/mcp", json=ping, headers=headers,
                        cookies={"tracehouse_token": tokens["read"]})  # fmt: skip
    assert cookie.status_code == 401
