"""Live-mode lag, CPU and memory, measured against the real watcher.

    uv run python bench/live_bench.py [--seconds 60] [--files 20] [--rate 200]

Starts `tracehouse sync live` (a subprocess) on a temp home with `--files` transcripts, lets it
idle, then has one writer per file append lines at `--rate` lines/s in total for `--seconds`.
A poller reads the ledger every 10 ms and times each line from its write to its commit.
Prints append→commit lag p50 / p99 / max, the watcher's CPU use idle and under load (percent
of one core) and its RSS before and after the load.
Targets (issue #6): p99 lag ≤ 250 ms, idle CPU ≤ 1% of a core, no growth of RSS over the run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson
import psutil

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "claude" / "home"
MAIN = "11111111-1111-4111-8111-111111111111.jsonl"


def make_home(root: Path, files: int) -> list[Path]:
    project = root / ".claude" / "projects" / "-bench-live"
    project.mkdir(parents=True)
    source = (FIXTURE / ".claude" / "projects" / "-tmp-demo" / MAIN).read_bytes()
    paths = []
    for n in range(files):
        path = project / f"{n:08d}-0000-4000-8000-000000000000.jsonl"
        path.write_bytes(source)
        paths.append(path)
    return paths


def writer(path: Path, interval: float, until: float, written: dict[str, float]) -> None:
    n = 0
    next_at = time.monotonic()
    while time.monotonic() < until:
        uuid = f"{path.stem[:8]}-{n}"
        record = {
            "type": "user",
            "uuid": uuid,
            "parentUuid": None,
            "sessionId": path.stem,
            "timestamp": "2026-11-22T00:00:00.000Z",
            "message": {"role": "user", "content": f"live bench line {n}"},
        }
        data = orjson.dumps(record) + b"\n"
        with path.open("ab") as f:
            written[uuid] = time.time()
            f.write(data)
        n += 1
        next_at += interval
        time.sleep(max(0.0, next_at - time.monotonic()))


def poll(ledger: Path, written: dict[str, float], lags: list[float], stop: threading.Event) -> None:
    conn = sqlite3.connect(ledger)
    last = conn.execute("SELECT coalesce(max(rowid), 0) FROM messages").fetchone()[0]
    while not stop.is_set():
        for rowid, key in conn.execute(
            "SELECT rowid, source_message_id FROM messages WHERE rowid > ?", (last,)
        ):
            last = max(last, rowid)
            if key in written:
                lags.append(time.time() - written[key])
        time.sleep(0.01)
    conn.close()


def cpu_percent(process: psutil.Process, seconds: float) -> float:
    before = process.cpu_times()
    time.sleep(seconds)
    after = process.cpu_times()
    return 100 * ((after.user - before.user) + (after.system - before.system)) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--rate", type=float, default=200)
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="tracehouse-live-bench-"))
    try:
        paths = make_home(root / "home", args.files)
        ledger = root / "ledger.db"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        command = [
            sys.executable,
            "-c",
            "from tracehouse.cli.app import main; main()",
            "sync",
            "live",
            "--home",
            str(root / "home"),
            "--store",
            str(ledger),
            "-q",
        ]
        process = subprocess.Popen(command, env=env)
        watcher = psutil.Process(process.pid)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                conn = sqlite3.connect(ledger)
                done = conn.execute("SELECT count(*) FROM sessions").fetchone()[0] >= args.files
                conn.close()
                if done:
                    break
            except sqlite3.Error:
                pass
            time.sleep(0.1)
        idle = cpu_percent(watcher, 5)
        rss_start = watcher.memory_info().rss

        written: dict[str, float] = {}
        lags: list[float] = []
        stop = threading.Event()
        poller = threading.Thread(target=poll, args=(ledger, written, lags, stop))
        poller.start()
        until = time.monotonic() + args.seconds
        interval = args.files / args.rate
        writers = [
            threading.Thread(target=writer, args=(p, interval, until, written)) for p in paths
        ]
        for w in writers:
            w.start()
        # CPU over the load, and RSS every tenth of it: a plateau is a warm cache, a slope a leak
        samples = []
        before = watcher.cpu_times()
        started = time.monotonic()
        while any(w.is_alive() for w in writers):
            samples.append(watcher.memory_info().rss)
            time.sleep(args.seconds / 10)
        after = watcher.cpu_times()
        elapsed = time.monotonic() - started
        load = 100 * ((after.user - before.user) + (after.system - before.system)) / elapsed
        time.sleep(1.0)
        rss_end = watcher.memory_info().rss
        stop.set()
        poller.join()
        process.terminate()
        process.wait(timeout=30)

        lags.sort()
        ms = [x * 1000 for x in lags]
        print(
            f"lines written {len(written):,} in {args.seconds:.0f}s ({args.rate:.0f}/s over"
            f" {args.files} files); committed and seen {len(ms):,}"
        )
        if ms:
            p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
            print(
                f"lag      p50 {statistics.median(ms):6.0f} ms   p99 {p99:6.0f} ms"
                f"   max {ms[-1]:6.0f} ms   (target p99 ≤ 250 ms)"
            )
        print(f"cpu      idle {idle:5.1f}% of a core (target ≤ 1%)   under load {load:5.1f}%")
        print(
            f"memory   RSS {rss_start / 2**20:.0f} MB before the load, {rss_end / 2**20:.0f} MB"
            f" after ({(rss_end - rss_start) / 2**20:+.1f} MB); during the load (MB):"
            f" {' '.join(f'{x / 2**20:.0f}' for x in samples)}"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
