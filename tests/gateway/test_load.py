"""The gateway under more requests than it has stores (issue #38): none hangs, each is answered
with its result or a 503 that says when to retry, the health check answers throughout, and the
gateway serves again as soon as the load is gone. The first gateway hung for good at 48."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.gateway.server import Gateway, ledger_with_tokens

pytestmark = pytest.mark.slow


async def _load(url: str, token: str, count: int) -> tuple[Counter[int], float, list[float]]:
    """`count` list requests at once, and health checks every 100 ms while they run."""
    limits = httpx.Limits(max_connections=count + 5)
    async with httpx.AsyncClient(base_url=url, timeout=15, limits=limits) as client:
        headers = {"Authorization": f"Bearer {token}"}
        done = asyncio.Event()

        async def one() -> tuple[int, float]:
            started = time.perf_counter()
            answer = await client.get("/v1/sessions", headers=headers, params={"limit": 200})
            return answer.status_code, time.perf_counter() - started

        async def health() -> list[float]:
            took = []
            while not done.is_set():
                started = time.perf_counter()
                assert (await client.get("/v1/health")).status_code == 200
                took.append(time.perf_counter() - started)
                await asyncio.sleep(0.1)
            return took

        checks = asyncio.create_task(health())
        answers = await asyncio.gather(*(one() for _ in range(count)))
        done.set()
        return Counter(s for s, _ in answers), max(t for _, t in answers), await checks


def test_many_readers_at_once_are_answered_and_health_stays_up(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.db")
    token = ledger_with_tokens(ledger, {"read": ("viewer", "read")})["read"]
    gateway = Gateway(ledger, tmp_path / "gateway.log").start()
    try:
        statuses, slowest, health = asyncio.run(_load(gateway.url, token, 150))
        assert set(statuses) <= {200, 503} and statuses[200] > 0, statuses
        assert slowest < 12  # every request answered: the wait for a store is 10 s at most
        # Health never queues behind the readers' wait for a store (10 s): it answers within
        # the time the machine takes to serve the burst at all (about 1 s on this project's
        # 2 cores, the client parsing 150 lists in the same process, and 2.5 s on a day they
        # ran at half speed), well under the wait it would share if it queued.
        assert health and max(health) < 5
        after = httpx.get(
            gateway.url + "/v1/sessions", headers={"Authorization": f"Bearer {token}"}
        )
        assert after.status_code == 200
    finally:
        gateway.stop()


def test_slow_uploads_hold_no_store(tmp_path: Path) -> None:
    """Ten pushers trickling their requests: the gateway's four stores stay free for the rest
    (a request is read before its route takes a store)."""
    import socket

    ledger = str(tmp_path / "ledger.db")
    tokens = ledger_with_tokens(ledger, {"push": ("laptop", "push"), "read": ("viewer", "read")})
    push, read = tokens["push"], tokens["read"]
    gateway = Gateway(ledger, tmp_path / "gateway.log").start()
    slow = []
    try:
        for _ in range(10):
            raw = socket.create_connection(("127.0.0.1", gateway.port))
            raw.sendall(b"POST /v1/sessions.import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                        + push.encode() + b"\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 5000\r\n\r\n{")  # fmt: skip
            slow.append(raw)
        time.sleep(0.5)
        started = time.perf_counter()
        headers = {"Authorization": f"Bearer {read}"}
        assert (
            httpx.get(gateway.url + "/v1/sessions", headers=headers, timeout=15).status_code == 200
        )
        assert time.perf_counter() - started < 2
    finally:
        for raw in slow:
            raw.close()
        gateway.stop()
