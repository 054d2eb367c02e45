"""The gateway under a crowd (`gateway_bench.py --load SECONDS`): many readers and pushers at once.

For `--load` seconds, against a PostgreSQL-backed gateway on loopback holding the test homes:

  readers   `--readers` clients at once, each asking in a loop for the session list, one
            session or a search (a team's browser tabs and scripts)
  pushers   `--load-pushers` machines at once, each with its own token, pushing a small
            `sessions.import` of a session of its own in a loop
  health    `GET /v1/health` every 250 ms

Every request has a 15 s client timeout: one that runs out is a hang. Where `wrk` is installed
(Debian: `apt-get install wrk`), it drives the readers: one Python process cannot keep 500
clients busy without its own queue inflating every figure (`--readers-with python` forces the
Python clients). After the load, the same
list request is timed until it is as fast as before the load. Printed: per route p50/p95/p99,
the slowest, requests/s and the 503 share; health's slowest; the recovery time; and whether
the targets hold (issue #38: no hang, every answer within 10 s with 200 or 503, health within
1 s throughout, full speed within 5 s of the load ending).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

TIMEOUT = 15.0


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))

    def add(self, route: str, status: str, seconds: float) -> None:
        self.latencies[route].append(seconds)
        self.statuses[route][status] += 1


def _push_request(machine: str, n: int) -> bytes:
    session = f"{machine}-load-{n}"
    message = {"sourceMessageId": "m1", "role": "user", "content": f"load {n}", "sequence": 0}
    item = {"sourceProvider": "claude-code", "sourceSessionId": session,
            "importedAtMs": 1767225600000, "session": {"title": session},
            "messages": [message]}  # fmt: skip
    return orjson.dumps({"mode": "import", "items": [item]})


async def _timed(client: httpx.AsyncClient, tally: Tally, route: str, **request: Any) -> None:
    start = time.perf_counter()
    wait = 0.0
    try:
        answer = await client.request(**request)
        status = str(answer.status_code)
        if answer.status_code == 503:  # as a pusher does: wait as told, then go on
            wait = float(answer.headers.get("retry-after", "1"))
    except httpx.TimeoutException:
        status = "timeout"
    except httpx.TransportError as exc:
        status = type(exc).__name__
    tally.add(route, status, time.perf_counter() - start)
    if wait:
        await asyncio.sleep(wait)


async def _crowd(url: str, read: str, pushes: list[tuple[str, str]], seconds: float,
                 readers: int, label: str) -> Tally:  # fmt: skip
    """One process's share of the crowd, until `seconds` have passed."""
    limits = httpx.Limits(max_connections=readers + len(pushes) + 10)
    async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT, limits=limits) as client:
        reading = {"Authorization": f"Bearer {read}"}
        tally = Tally()
        end = time.monotonic() + seconds

        async def reader(n: int) -> None:
            routes = [("list", "/v1/sessions", {"limit": 50}), ("session", f"/v1/sessions/{label}",
                      {}), ("search", "/v1/search", {"q": "test"})]  # fmt: skip
            i = n
            while time.monotonic() < end:
                route, path, params = routes[i % len(routes)]
                i += 1
                await _timed(client, tally, route, method="GET", url=path, params=params,
                             headers=reading)  # fmt: skip

        async def pusher(machine: str, token: str) -> None:
            headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            n = 0
            while time.monotonic() < end:
                n += 1
                await _timed(client, tally, "push", method="POST", url="/v1/sessions.import",
                             content=_push_request(machine, n), headers=headers)  # fmt: skip

        await asyncio.gather(*(reader(n) for n in range(readers)),
                             *(pusher(m, t) for m, t in pushes))  # fmt: skip
    return tally


def _crowd_part(args: tuple[str, str, list[tuple[str, str]], float, int, str]) -> Tally:
    return asyncio.run(_crowd(*args))


def _probe(url: str, seconds: float) -> list[float]:
    """Health from a process of its own, so that the crowd's own queue is not in its time."""
    took = []
    end = time.monotonic() + seconds
    with httpx.Client(base_url=url, timeout=5) as client:
        while time.monotonic() < end:
            start = time.perf_counter()
            try:
                ok = client.get("/v1/health").status_code == 200
            except httpx.HTTPError:
                ok = False
            took.append(time.perf_counter() - start if ok else float("inf"))
            time.sleep(0.25)
    return took


def _read_probe(url: str, read: str, seconds: float) -> list[tuple[int, float]]:
    """A reader of its own, once every 250 ms: (status, seconds) of each list request."""
    answers = []
    end = time.monotonic() + seconds
    headers = {"Authorization": f"Bearer {read}"}
    with httpx.Client(base_url=url, timeout=TIMEOUT) as client:
        while time.monotonic() < end:
            start = time.perf_counter()
            try:
                status = client.get("/v1/sessions", headers=headers).status_code
            except httpx.HTTPError:
                status = 0
            answers.append((status, time.perf_counter() - start))
            time.sleep(0.25)
    return answers


def _stall(url: str, token: str, count: int) -> list[socket.socket]:
    """`count` uploads from one push token that declare a body and never send it (issue #63):
    kept open until the caller closes them."""
    host, port = url.removeprefix("http://").split(":")
    stalled = []
    for _ in range(count):
        raw = socket.create_connection((host, int(port)))
        raw.sendall(b"POST /v1/sessions.import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                    + token.encode() + b"\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 1000\r\n\r\n")  # fmt: skip
        stalled.append(raw)
    return stalled


def _list_time(client: httpx.Client, headers: dict[str, str], count: int) -> float:
    took = []
    for _ in range(count):
        start = time.perf_counter()
        client.get("/v1/sessions", params={"limit": 50}, headers=headers)
        took.append(time.perf_counter() - start)
    return statistics.median(took)


def _recovery(client: httpx.Client, headers: dict[str, str], before: float) -> float:
    """Seconds after the load until a list request is within twice its speed before it."""
    start = time.perf_counter()
    while time.perf_counter() - start < 60:
        if _list_time(client, headers, 3) <= 2 * before + 0.005:
            return time.perf_counter() - start
    return float("inf")


WRK_SCRIPT = """
local paths = {"/v1/sessions?limit=50", "/v1/sessions/%s", "/v1/search?q=test"}
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", paths[n %% 3 + 1])
end
"""


def _wrk(url: str, read: str, seconds: float, readers: int, label: str) -> subprocess.Popen[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT % label)  # wrk reads it at start; the OS's tmp cleaning removes it
    return subprocess.Popen(
        ["wrk", "-t2", f"-c{readers}", f"-d{int(seconds)}s", "--timeout", f"{int(TIMEOUT)}s",
         "--latency", "-s", script.name, "-H", f"Authorization: Bearer {read}", url],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def _wrk_report(output: str) -> tuple[bool, float]:
    """Print wrk's figures; (no socket errors and no timeouts, the slowest in seconds)."""
    print("readers (wrk, all three routes together, as the clients saw them):")
    for line in output.splitlines():
        if line.strip().startswith(("Latency", "50%", "90%", "99%", "Requests/sec", "Non-2xx",
                                    "Socket errors")) or "requests in" in line:  # fmt: skip
            print("  " + line.strip())
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                       output)  # fmt: skip
    found = re.search(r"Latency\s+\S+\s+\S+\s+([0-9.]+)(us|ms|s)", output)
    slowest = float(found.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[found.group(2)] if (
        found) else float("inf")  # fmt: skip
    clean = errors is None or not any(int(g) for g in errors.groups())
    return clean, slowest


def load(url: str, read: str, pushes: list[tuple[str, str]], seconds: float, readers: int,
         processes: int = 2, with_wrk: bool | None = None, stalled: int = 0,
         teammate: str | None = None) -> bool:  # fmt: skip
    """The crowd from `processes` client processes (one asyncio loop cannot keep 500 clients
    busy), health and one more reader from two more; then the recovery. With `stalled`, that
    many uploads from the first pusher's token hang without their body throughout; the reader
    beside the crowd reads with `teammate`'s token (else the crowd's)."""
    import multiprocessing

    with httpx.Client(base_url=url, timeout=TIMEOUT) as client:
        reading = {"Authorization": f"Bearer {read}"}
        listed = client.get("/v1/sessions", headers=reading).json()["sessions"]
        label = listed[0]["label"] if listed else "x"
        before = _list_time(client, reading, 20)
    with_wrk = shutil.which("wrk") is not None if with_wrk is None else with_wrk
    wrk = _wrk(url, read, seconds, readers, label) if with_wrk else None
    python_readers = 0 if wrk else readers
    parts = [(url, read, pushes[i::processes], seconds,
              len(range(i, python_readers, processes)), label)
             for i in range(processes)]  # fmt: skip
    hanging = _stall(url, pushes[0][1], stalled) if stalled and pushes else []
    try:
        with multiprocessing.get_context("spawn").Pool(processes + 2) as pool:
            probing = pool.apply_async(_probe, (url, seconds))
            reading_probe = pool.apply_async(_read_probe, (url, teammate or read, seconds))
            tallies = pool.map(_crowd_part, parts)
            health = probing.get()
            probe = reading_probe.get()
    finally:
        for raw in hanging:
            raw.close()
    wrk_clean, wrk_slowest = True, 0.0
    if wrk is not None:
        output, _ = wrk.communicate(timeout=seconds + 60)
        wrk_clean, wrk_slowest = _wrk_report(output)
    tally = Tally()
    for part in tallies:
        for route, took in part.latencies.items():
            tally.latencies[route].extend(took)
            tally.statuses[route].update(part.statuses[route])
    with httpx.Client(base_url=url, timeout=TIMEOUT) as client:
        recovered = _recovery(client, reading, before)
    print(f"\nload: {readers} readers and {len(pushes)} pushers for {seconds:.0f} s")
    print(f"{'route':<8} {'requests':>9} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}"
          f" {'max s':>7} {'503':>6}  statuses")  # fmt: skip
    worst, answered = 0.0, True
    for route in sorted(tally.latencies):
        took = sorted(tally.latencies[route])
        count = len(took)
        statuses = tally.statuses[route]
        share = statuses["503"] / count if count else 0.0
        worst = max(worst, took[-1])
        answered &= set(statuses) <= {"200", "503"}
        print(f"{route:<8} {count:9,} {count / seconds:7.0f} {_q(took, 0.5):8.0f}"
              f" {_q(took, 0.95):8.0f} {_q(took, 0.99):8.0f} {took[-1]:7.2f} {share:6.1%}"
              f"  {dict(statuses)}")  # fmt: skip
    print(f"health   {len(health)} checks, slowest {max(health) * 1000:.0f} ms")
    quick = sum(1 for status, took in probe if status == 200 and took <= 1.0)
    print(f"reader   {len(probe)} list requests of one read token beside the crowd"
          f"{f' and {stalled} stalled uploads' if stalled else ''}: {quick} answered 200 within"
          f" 1 s, statuses {dict(Counter(status for status, _ in probe))}, slowest"
          f" {max(took for _, took in probe) * 1000:.0f} ms")  # fmt: skip
    print(f"recovery {recovered:.2f} s after the load to list at the speed it had before")
    answered &= wrk_clean
    worst = max(worst, wrk_slowest)
    ok = answered and worst <= 10 and max(health) <= 1.0 and recovered <= 5
    print(
        "target: every request answered (200 or 503) within 10 s, health within 1 s,"
        " full speed within 5 s —",
        "met" if ok else "NOT met",
    )
    return ok


def _q(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] * 1000
