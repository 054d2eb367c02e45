"""Pushing to a PostgreSQL-backed gateway against a direct PostgreSQL backfill, in one run.

    uv run python bench/gateway_bench.py [--copies 16] [--pushers 8] [--runs 3]
                                         [--dsn postgresql://postgres@127.0.0.1:5432/test]

The corpus is `backfill_bench.py`'s (every fixture source replicated `--copies` times with fresh
ids), dealt out by copy into `--pushers` machine homes (hard links), each with the
`sources.toml` that names its roots.
Each run, in a fresh schema of the server at --dsn, interleaved:

  direct      `sync backfill` of the whole corpus straight into PostgreSQL (the floor)
  gateway ×1  `tracehouse serve` in front of the same kind of schema; `--pushers` machines
              run `sync backfill --store http://…` at once, each with its own token and one
              parser process (on a laptop of its own, a pusher parses with its cores; here
              eight of them share this machine's with the gateway and PostgreSQL)
  gateway ×2  the same with `serve --workers 2`: the gateway keeps no state of its own

For each: wall time until every session is stored, sessions/s and MB/s, the ratio to direct;
for the gateway, p50/p99 of the `sessions.import` request durations (from its access log) and
the gateway's peak memory (its process tree's summed PSS). Each push is checked: as many
sessions and rows as the direct backfill stored. Medians and ranges over `--runs`.
Target (issue #18): each gateway run ≥ 70% of direct. `--workers 1,4` sets the gateway runs.

    uv run python bench/gateway_bench.py --load 60 [--readers 500] [--load-pushers 20]
                                         [--stalled 70]

runs the gateway under a crowd instead (`gateway_load.py`): readers and pushers at once, each
route's latencies, the 503 share, health, and how soon it serves at full speed again; with
`--stalled N`, N uploads of one push token that never send their body, and a teammate's reader
of its own token beside the crowd.

    uv run python bench/gateway_bench.py --pages [--copies 8] [--requests 40]

times the pages a reader opens instead (`page_bench.py`): the list of 200 sessions and a
1,000-message session, p50/p95 against reading their rows, and their size.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
import xxhash
from backfill_bench import HERE, OUT, build_corpus, files_of
from corpus import sources_toml
from gateway_load import load
from postgres_bench import DEFAULT_DSN, schema

from tracehouse.gateway.tokens import add_token
from tracehouse.store import open_store

CLI = [sys.executable, "-m", "tracehouse.cli.app"]
_DURATION = re.compile(rb'"POST /v1/sessions.import" 200 ([0-9.]+) ms')


def deal(corpus: Path, machines: int) -> list[Path]:
    """The corpus as `machines` homes laid out as the corpus is: copy n goes to machine
    n % machines (a Codex rollout, whose name keeps no copy number, by a hash of its name)."""
    target = OUT / "corpus" / f"{corpus.name}-m{machines}"
    homes = [target / f"machine-{i}" for i in range(machines)]
    if (target / ".complete").exists():
        return homes
    for path in files_of(corpus):
        rel = path.relative_to(corpus)
        if rel.parts[0] == ".claude":  # projects/<name>-cNNN/…
            copy = int(rel.parts[2].rsplit("-c", 1)[1])
        elif rel.parts[0] == "homes":  # homes/cNNN/<fixture home>/…
            copy = int(rel.parts[1][1:])
        else:
            copy = xxhash.xxh32_intdigest(path.name.encode())
        out = homes[copy % machines] / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if not out.exists():
            os.link(path, out)
    for home in homes:
        (home / "sources.toml").write_text(sources_toml(home))
    (target / ".complete").write_text("ok")
    return homes


def counts(dsn: str) -> tuple[int, int]:
    store = open_store(dsn)
    try:
        sessions = store.query("SELECT count(*) AS n FROM sessions")[0]["n"]
        messages = store.query("SELECT count(*) AS n FROM messages")[0]["n"]
    finally:
        store.close()
    return int(sessions), int(messages)


def direct(corpus: Path, dsn: str) -> float:
    start = time.perf_counter()
    subprocess.run([*CLI, "sync", "backfill", "--config", str(corpus / "sources.toml"),
                    "--store", dsn, "-q"], check=True, env=_env())  # fmt: skip
    return time.perf_counter() - start


class Sampler(threading.Thread):
    """The peak summed PSS of a process tree, sampled every 50 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.root, self.peak, self.done = psutil.Process(pid), 0, threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                tree = [self.root, *self.root.children(recursive=True)]
                self.peak = max(self.peak, sum(p.memory_full_info().pss for p in tree))
            except psutil.Error:
                pass
            time.sleep(0.05)


def through_gateway(homes: list[Path], dsn: str, workers: int, work: Path) -> dict[str, float]:
    store = open_store(dsn)  # migrated here: the gateway's start-up is not what is timed
    tokens = []
    for i in range(len(homes)):
        tokens.append(_token_file(work / f"machine-{i}.token", store, f"machine-{i}"))
    store.close()
    log = work / f"gateway-{workers}.log"
    gateway, url = _serve(dsn, workers, log)
    sampler = Sampler(gateway.pid)
    sampler.start()
    start = time.perf_counter()
    pushers = [
        subprocess.Popen(
            [
                *CLI,
                "sync",
                "backfill",
                "--config",
                str(home / "sources.toml"),
                "--store",
                url,
                "--token-file",
                str(token),
                "-q",
            ],
            # One parser each: the eight pushers already outnumber the cores they share, and
            # a laptop's own worker processes would each start on this machine too.
            env=_env(TRACEHOUSE_MACHINE=f"machine-{i}", TRACEHOUSE_WORKERS="1"),
            stderr=subprocess.PIPE,
        )
        for i, (home, token) in enumerate(zip(homes, tokens, strict=True))
    ]
    try:
        for pusher in pushers:
            _, err = pusher.communicate()
            if pusher.returncode != 0:
                tail = log.read_text()[-3000:]
                raise SystemExit(f"a pusher failed ({pusher.returncode}): {err.decode()[-2000:]}"
                                 f"\ngateway log:\n{tail}")  # fmt: skip
        wall = time.perf_counter() - start
    finally:  # a failed run leaves no gateway (or its workers) behind
        sampler.done.set()
        gateway.terminate()
        gateway.wait(timeout=30)
    durations = sorted(float(m) for m in _DURATION.findall(log.read_bytes()))
    return {
        "wall": wall,
        "p50": _percentile(durations, 0.50),
        "p99": _percentile(durations, 0.99),
        "requests": len(durations),
        "pss": sampler.peak,
    }


def _token_file(path: Path, store: Any, name: str) -> Path:
    path.write_text(add_token(store, name, "push") + "\n")
    path.chmod(0o600)  # a laptop refuses a token file others can read
    return path


def _serve(dsn: str, workers: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`tracehouse serve` on a free port, answering its health check; its log in `log`."""
    port = _free_port()
    with log.open("wb") as out:
        gateway = subprocess.Popen(
            [*CLI, "serve", "--store", dsn, "--port", str(port), "--workers", str(workers)],
            stdout=out, stderr=out, env=_env(),
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    _wait_healthy(url, gateway, log)
    return gateway, url


def _percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"the gateway exited: {log.read_text()[-2000:]}")
        time.sleep(0.1)
    raise SystemExit("the gateway did not answer within 60 s")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "TRACEHOUSE_PROGRESS": "false", **extra}


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f}  ({min(values):.2f}–{max(values):.2f})"


def crowd(args: argparse.Namespace) -> bool:
    """The load run: a gateway over a fresh schema holding the test homes, then the crowd."""
    data = HERE.parent / "tests" / "data"
    with schema(args.dsn) as dsn, tempfile.TemporaryDirectory(prefix="gateway-load-") as tmp:
        work = Path(tmp)
        store = open_store(dsn)
        read = add_token(store, "viewer", "read")
        teammate = add_token(store, "teammate", "read")  # the reader beside the crowd
        pushes = [(f"load-{i}", add_token(store, f"load-{i}", "push"))
                  for i in range(args.load_pushers)]  # fmt: skip
        seed = _token_file(work / "seed.token", store, "seed")
        store.close()
        workers = int(args.workers.split(",")[0])
        log = work / "gateway.log"
        gateway, url = _serve(dsn, workers, log)
        try:
            for home in ("claude/home", "codex/home"):
                subprocess.run([*CLI, "sync", "backfill", "--home", str(data / home), "--store",
                                url, "--token-file", str(seed), "-q"], check=False,
                               env=_env())  # fmt: skip
            print(f"gateway ×{workers} on PostgreSQL, {counts(dsn)[0]} sessions to read")
            with_wrk = None if args.readers_with is None else args.readers_with == "wrk"
            met = load(url, read, pushes, args.load, args.readers, with_wrk=with_wrk,
                       stalled=args.stalled, teammate=teammate)
        finally:
            gateway.terminate()
            gateway.wait(timeout=30)
        text = log.read_bytes()
        print("inside the gateway (its access log: from a request's arrival to its answer):")
        for route, took in sorted(_served(text).items()):
            print(f"  {route:<34} {len(took):7,}  p50 {_percentile(took, 0.5):6.0f} ms"
                  f"  p99 {_percentile(took, 0.99):6.0f} ms  max {took[-1]:6.0f} ms")  # fmt: skip
        other = [line for line in text.decode("utf-8", "replace").splitlines()
                 if '" ' not in line and "INFO:" not in line]  # fmt: skip
        if other:  # anything but the access lines and uvicorn's start and stop: errors
            print(f"the gateway's log holds {len(other)} other lines:", *other[-10:], sep="\n  ")
        return met


_ACCESS = re.compile(rb'"(GET|POST) ([^" ]+)" (\d+) ([0-9.]+) ms')


def _served(log: bytes) -> dict[str, list[float]]:
    """Route and status → the durations the gateway's access log gives, sorted."""
    found: dict[str, list[float]] = {}
    for method, path, status, ms in _ACCESS.findall(log):
        route = re.sub(rb"/v1/sessions/[^/]+$", b"/v1/sessions/{label}", path)
        route = re.sub(rb"/v1/runs/[^/]+/finish$", b"/v1/runs/{id}/finish", route).decode()
        found.setdefault(f"{method.decode()} {route} {status.decode()}", []).append(float(ms))
    return {k: sorted(v) for k, v in found.items()}


def main() -> None:
    if "--pages" in sys.argv:  # the pages' timings: page_bench.py, with its own options
        import page_bench

        page_bench.main([a for a in sys.argv[1:] if a != "--pages"])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=16)
    parser.add_argument("--pushers", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dsn", default=os.environ.get("TRACEHOUSE_PG_DSN", DEFAULT_DSN))
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    parser.add_argument("--workers", default="1,2", help="gateway processes of each gateway run")
    parser.add_argument("--load", type=float, default=0, help="seconds of the crowd; 0: off")
    parser.add_argument("--readers", type=int, default=500)
    parser.add_argument("--load-pushers", type=int, default=20)
    parser.add_argument("--stalled", type=int, default=0,
                        help="uploads from one push token that never send their body")  # fmt: skip
    parser.add_argument(
        "--readers-with",
        choices=("wrk", "python"),
        default=None,
        help="what drives the readers (default: wrk where it is installed)",
    )
    args = parser.parse_args()
    if args.load:
        raise SystemExit(0 if crowd(args) else 1)
    for name in ("copies", "pushers", "runs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.copies < args.pushers:
        parser.error("--copies must be at least --pushers: each machine gets whole copies")

    corpus = build_corpus(args.corpus, args.copies)
    homes = deal(corpus, args.pushers)
    mb = sum(p.stat().st_size for p in files_of(corpus)) / 1e6
    print(f"corpus: {mb:,.0f} MB in {corpus}, dealt to {args.pushers} machines")
    counts_of = [int(w) for w in args.workers.split(",")]
    walls: dict[str, list[float]] = {"direct": [], **{f"gateway ×{w}": [] for w in counts_of}}
    gateway_runs: dict[str, list[dict[str, float]]] = {f"gateway ×{w}": [] for w in counts_of}
    expected: tuple[int, int] | None = None
    with tempfile.TemporaryDirectory(prefix="gateway-bench-") as scratch:
        for run in range(args.runs):
            for mode in walls:
                with schema(args.dsn) as dsn:
                    if mode == "direct":
                        walls[mode].append(direct(corpus, dsn))
                    else:
                        workers = int(mode.rsplit("×", 1)[1])
                        figures = through_gateway(homes, dsn, workers, Path(scratch))
                        walls[mode].append(figures["wall"])
                        gateway_runs[mode].append(figures)
                    stored = counts(dsn)
                expected = expected or stored
                if stored != expected:
                    raise SystemExit(f"{mode}: {stored} sessions, messages; direct {expected}")
                print(f"run {run + 1} {mode:<11} {walls[mode][-1]:6.2f} s", flush=True)

    sessions = expected[0] if expected else 0
    base = statistics.median(walls["direct"])
    print(f"\n{sessions:,} sessions, {expected[1] if expected else 0:,} messages each time")
    print(f"{'':12} {'wall s (range)':>24} {'sessions/s':>11} {'MB/s':>7} {'of direct':>10}")
    for mode, values in walls.items():
        wall = statistics.median(values)
        print(f"{mode:<12} {_spread(values):>24} {sessions / wall:11.0f} {mb / wall:7.1f}"
              f" {base / wall:10.0%}")  # fmt: skip
    for mode, figures in gateway_runs.items():
        p50 = statistics.median(f["p50"] for f in figures)
        p99 = [f["p99"] for f in figures]
        pss = [f["pss"] / 2**20 for f in figures]
        requests = statistics.median(f["requests"] for f in figures)
        print(f"{mode:<12} sessions.import p50 {p50:.0f} ms, p99 {statistics.median(p99):.0f} ms"
              f" ({min(p99):.0f}–{max(p99):.0f}) over {requests:.0f} requests; gateway peak PSS"
              f" {statistics.median(pss):.0f} MB ({min(pss):.0f}–{max(pss):.0f})")  # fmt: skip
    print("target: each gateway run ≥ 70% of direct")


if __name__ == "__main__":
    main()
