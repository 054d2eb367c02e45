"""MCP: how long an agent waits on `tracehouse mcp`, on the ledger of the backfill corpus.

    uv run python bench/mcp_bench.py [--copies 24] [--calls 240] [--starts 5] [--pg DSN]

Builds (or reuses) backfill_bench's replicated corpus of every source and its ledger, then:

  start     spawn `tracehouse mcp` through the SDK's stdio client to its first answer
            (initialize + list_sessions), against the floor of a bare `python -c "import
            mcp.server.mcpserver"` (the SDK's import alone), interleaved `--starts` times
  calls     ≥ 200 calls of mixed tools through one stdio client (search of every query shape,
            list_sessions pages and filters, read_session pages and hits, files_touched of
            paths the ledger names, usage by every period), p50 / p95 / max per tool and over
            all (target p95 ≤ 100 ms), against the floor of the same work as bare library calls
            in this process (what the protocol and the process boundary add)
  budget    every read_session answer within its budget (the largest share printed)
  PostgreSQL with --pg (or TRACEHOUSE_PG_DSN answering): the ledger copied there, the calls again
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import anyio  # noqa: E402
from backfill_bench import bench_ledger, build_corpus, files_of  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from search_bench import make_queries, percentile  # noqa: E402

from tracehouse.mcp_server.reading import estimate_tokens  # noqa: E402
from tracehouse.mcp_server.server import OneStore, local_dispatch  # noqa: E402
from tracehouse.store import open_store  # noqa: E402

Call = tuple[str, dict[str, Any]]
PERIODS = ("daily", "weekly", "monthly", "session", "project", "model")


def ledger_of(corpus: Path, fresh: bool) -> Path:
    return bench_ledger(corpus, "mcp-ledger.db", fresh)


def server(store: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tracehouse.cli.app", "mcp", "--store", store]
    )


def make_calls(ledger: Path, n: int, seed: int = 11) -> list[Call]:
    """`n` calls of the five tools in proportion to how an agent uses them: mostly search and
    read_session, the rest alike."""
    rng = random.Random(seed)
    queries = make_queries(ledger, n)
    conn = sqlite3.connect(ledger)
    labels = [r[0] for r in conn.execute("SELECT label FROM sessions ORDER BY rowid")]
    big = [r[0] for r in conn.execute(
        "SELECT label FROM sessions ORDER BY message_count DESC LIMIT 50")]  # fmt: skip
    focus = [r for r in conn.execute(
        "SELECT s.label, m.message_id FROM messages m JOIN sessions s USING (session_id)"
        " ORDER BY m.rowid LIMIT 5000")]  # fmt: skip
    params = [r[0] for r in conn.execute(
        "SELECT params FROM tool_calls WHERE params LIKE '%path%' ORDER BY rowid LIMIT 5000"
    )]  # fmt: skip
    providers = [r[0] for r in conn.execute("SELECT DISTINCT source_provider FROM sessions")]
    conn.close()
    paths = sorted({m.group(1) for p in params
                    for m in re.finditer(r'"(?:file_path|filePath|path|absolute_path|target_file)"'
                                         r':"([^"]{3,200})"', p)})  # fmt: skip
    names = [p.replace("\\\\", "/").rsplit("/", 1)[-1] for p in paths]

    def search() -> Call:
        _shape, text, filters = queries[rng.randrange(len(queries))]
        args: dict[str, Any] = {"query": text, "limit": 10}
        if filters.providers:
            args["providers"] = list(filters.providers)
        return "search", args

    def read() -> Call:
        kind = rng.randrange(3)
        if kind == 0:
            return "read_session", {"session": rng.choice(big), "start": rng.randrange(0, 40)}
        if kind == 1:
            label, message = rng.choice(focus)
            return "read_session", {"session": label, "around": message}
        return "read_session", {"session": rng.choice(labels), "budget": rng.choice((2000, 8000))}

    def listed() -> Call:
        args: dict[str, Any] = {"limit": 20, "offset": rng.choice((0, 20, 200, 2000))}
        if rng.random() < 0.5:
            args["providers"] = [rng.choice(providers)]
        return "list_sessions", args

    def touched() -> Call:
        return "files_touched", {"path": rng.choice(paths + names)}

    def usage() -> Call:
        args: dict[str, Any] = {"by": rng.choice(PERIODS)}
        if rng.random() < 0.5:
            args["providers"] = [rng.choice(providers)]
        return "usage", args

    mix: list[Callable[[], Call]] = [search, search, search, read, read, read, listed, touched,
                                     usage]  # fmt: skip
    return [mix[i % len(mix)]() for i in range(n)]


def timed_calls(store: str, calls: list[Call]) -> tuple[dict[str, list[float]], float]:
    """Each call's seconds by tool (and "all") through one stdio client, and the largest share
    of its budget a read_session answer used."""

    async def run() -> tuple[dict[str, list[float]], float]:
        by_tool: dict[str, list[float]] = {}
        share = 0.0
        async with Client(server(store)) as client:
            for name, args in calls[:10]:  # warm the page cache, as a ledger in use is
                await client.call_tool(name, args)
            for name, args in calls:
                start = time.perf_counter()
                result = await client.call_tool(name, args)
                took = time.perf_counter() - start
                by_tool.setdefault(name, []).append(took)
                by_tool.setdefault("all", []).append(took)
                text = "".join(getattr(c, "text", "") for c in result.content)
                if result.is_error:
                    print(f"  error  {name} {args}: {text[:120]}")
                if name == "read_session" and not result.is_error:
                    share = max(share, estimate_tokens(text) / args.get("budget", 8000))
        return by_tool, share

    return anyio.run(run)


def bare_calls(store: str, calls: list[Call]) -> dict[str, list[float]]:
    """The floor: the same tools as library calls in this process, no protocol, no pipe."""
    ledger = OneStore(open_store(store, create=False))
    dispatch = local_dispatch(ledger)

    async def run() -> dict[str, list[float]]:
        by_tool: dict[str, list[float]] = {}
        for name, args in calls[:10]:
            await dispatch(name, args)
        for name, args in calls:
            start = time.perf_counter()
            with contextlib.suppress(Exception):  # a tool error costs what it costs
                await dispatch(name, args)
            by_tool.setdefault(name, []).append(time.perf_counter() - start)
            by_tool.setdefault("all", []).append(time.perf_counter() - start)
        return by_tool

    try:
        return anyio.run(run)
    finally:
        ledger.store.close()


def first_answer(store: str) -> float:
    async def run() -> float:
        start = time.perf_counter()
        async with Client(server(store)) as client:
            await client.call_tool("list_sessions", {"limit": 5})
            return time.perf_counter() - start

    return anyio.run(run)


def sdk_import() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True)
    return time.perf_counter() - start


def measure_start(store: str, starts: int) -> None:
    served, floor = [], []
    for _ in range(starts):  # interleaved: the machine's load changes from run to run
        floor.append(sdk_import())
        served.append(first_answer(store))
    for name, values in (("first answer", served), ("SDK import", floor)):
        print(f"start    {name:<13} median {statistics.median(values) * 1000:6.0f} ms"
              f"  range {min(values) * 1000:.0f}-{max(values) * 1000:.0f} ms")  # fmt: skip
    ratio = statistics.median(served) / statistics.median(floor)
    print(f"start    first answer {ratio:.2f}x the SDK's import (target: first answer ≤ 1 s)")


def report(backend: str, served: dict[str, list[float]], bare: dict[str, list[float]]) -> None:
    for tool, values in served.items():
        p95, floor = percentile(values, 0.95), percentile(bare[tool], 0.95)
        print(f"calls    {backend:<10} {tool:<14} n={len(values):<4}"
              f" p50 {statistics.median(values) * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms"
              f"  max {max(values) * 1000:6.1f} ms   bare p95 {floor * 1000:6.1f} ms")  # fmt: skip
    p95 = percentile(served["all"], 0.95) * 1000
    print(f"calls    {backend:<10} p95 over all {p95:.1f} ms (target ≤ 100 ms)")


def measure_calls(backend: str, store: str, calls: list[Call], passes: int) -> None:
    for _ in range(passes):  # interleaved with the floor
        bare = bare_calls(store, calls)
        served, share = timed_calls(store, calls)
        report(backend, served, bare)
        print(f"budget   {backend:<10} largest read_session answer: {share:.0%} of its budget")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--calls", type=int, default=240)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--fresh", action="store_true", help="rebuild the ledger")
    parser.add_argument("--pg", default=os.environ.get("TRACEHOUSE_PG_DSN"))
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    args = parser.parse_args()
    corpus = build_corpus(args.corpus.resolve(), args.copies)
    mb = sum(p.stat().st_size for p in files_of(corpus)) / 1e6
    ledger = ledger_of(corpus, args.fresh)
    print(f"corpus   {mb:,.0f} MB; ledger {ledger.stat().st_size / 1e6:,.0f} MB at {ledger}")
    calls = make_calls(ledger, max(args.calls, 200))
    counts = {name: sum(1 for n, _ in calls if n == name) for name, _ in calls}
    print(f"calls    {len(calls)}: " + ", ".join(f"{n} {c}" for n, c in counts.items()))
    measure_start(str(ledger), args.starts)
    measure_calls("sqlite", str(ledger), calls, args.passes)
    if args.pg:
        from tracehouse.upkeep.copy import copy_store

        try:
            team = open_store(args.pg)
        except Exception as exc:  # a bench: report and go on
            print(f"postgres skipped: {exc}")
            return
        local = open_store(ledger, create=False)
        start = time.perf_counter()
        copy_store(local, team)
        local.close()
        team.close()
        print(f"postgres ledger copied in {time.perf_counter() - start:.1f} s")
        measure_calls("postgresql", args.pg, calls, args.passes)


if __name__ == "__main__":
    main()
