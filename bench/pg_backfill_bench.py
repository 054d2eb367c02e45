"""A full backfill into PostgreSQL against the same backfill into SQLite, measured in one run.

    uv run python bench/pg_backfill_bench.py [--copies 24] [--repeat 3] [--workers 1,2]
                                             [--dsn postgresql://postgres@127.0.0.1:5432/test]

Builds (or reuses) the six-source corpus of `backfill_bench.py` (`bench/corpus.py`), then runs
`sync backfill` with the default settings `--repeat` times into each store, interleaved: a new
SQLite ledger, and a throwaway schema of the server at --dsn (default: TRACEHOUSE_PG_DSN or the
local one), created and migrated before the clock starts and dropped after. Prints each store's
wall time (median and range), the ratio, and where the CPU went: the client's process tree and
the whole machine's busy time over the run (the server's share is the difference, when the
server runs on this machine). Target (issue #20): PostgreSQL within 1.5x of SQLite.

`--workers 1,2` runs both stores at each worker count instead of the default: PostgreSQL takes
writes side by side, so N workers are N parsers that each write (issue #46: faster with 2
writers than with 1); SQLite's are one writer and N - 1 parsers.
"""

from __future__ import annotations

import argparse
import os
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import psutil
import psycopg
from backfill_bench import build_corpus, worker_counts

from tracehouse.store.postgres.store import PostgresStore

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def timed_backfill(config: Path, store: str) -> tuple[float, float, float]:
    """(wall, client CPU, machine busy CPU) of one `sync backfill` in a child process."""
    command = [sys.executable, "-c", "from tracehouse.cli.app import main; main()", "sync",
               "backfill", "--config", str(config), "--store", store, "--quiet"]  # fmt: skip
    before_cpu = _busy(psutil.cpu_times())
    before_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"backfill into {store} failed: {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client = (after.ru_utime - before_children.ru_utime) + (
        after.ru_stime - before_children.ru_stime
    )
    return wall, client, _busy(psutil.cpu_times()) - before_cpu


def _busy(times: object) -> float:
    return sum(getattr(times, f, 0.0) for f in ("user", "system", "nice", "irq", "softirq"))


def pg_run(config: Path, dsn: str) -> tuple[float, float, float]:
    schema = f"th_bench_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in dsn else "?"
    scoped = f"{dsn}{sep}options={quote(f'-csearch_path={schema}')}"
    try:
        PostgresStore(scoped).close()  # migrations are not part of a backfill
        return timed_backfill(config, scoped)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def sqlite_run(config: Path) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory(prefix="th-pgbench-") as tmp:
        return timed_backfill(config, str(Path(tmp) / "ledger.db"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=Path("../shared/fixtures"))
    parser.add_argument("--dsn", default=os.environ.get("TRACEHOUSE_PG_DSN") or DEFAULT_DSN)
    parser.add_argument("--workers", type=worker_counts, default=[0], help="e.g. 1,2")
    args = parser.parse_args()
    if args.copies < 1 or args.repeat < 1:
        parser.error("--copies and --repeat must be at least 1")
    sources = build_corpus(args.corpus, args.copies) / "sources.toml"
    configs = {}
    for n in args.workers:  # 0: the default, one per core
        configs[n] = sources.parent / f"pg-bench-workers-{n}.toml"
        configs[n].write_text(f"workers = {n}\n{sources.read_text()}" if n else sources.read_text())
    runs: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    for _ in range(args.repeat):
        for n, config in configs.items():
            runs.setdefault(("sqlite", n), []).append(sqlite_run(config))
            runs.setdefault(("postgresql", n), []).append(pg_run(config, args.dsn))
    for (name, n), measured in runs.items():
        walls = [w for w, _, _ in measured]
        client = statistics.median(c for _, c, _ in measured)
        busy = statistics.median(b for _, _, b in measured)
        workers = f"{n} workers" if n else "default  "
        print(f"{name:10} {workers} backfill {statistics.median(walls):5.1f} s (range"
              f" {min(walls):.1f}–{max(walls):.1f})   CPU: client {client:.1f} s, machine busy"
              f" {busy:.1f} s (medians)")  # fmt: skip
    for n in configs:
        ratio = statistics.median(w for w, _, _ in runs[("postgresql", n)]) / statistics.median(
            w for w, _, _ in runs[("sqlite", n)]
        )
        workers = f"{n} workers" if n else "default"
        print(f"ratio      {workers}: PostgreSQL / SQLite = {ratio:.2f}x   (target ≤ 1.5x)")


if __name__ == "__main__":
    main()
