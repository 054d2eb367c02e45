"""Exports and usage reports on the ledger of the backfill corpus: speed and peak memory.

    uv run python bench/export_bench.py [--copies 24] [--runs 3] [--sample 300]

Builds (or reuses) backfill_bench's replicated corpus (24 copies ≈ 0.9 GB) and its ledger, then
runs each measure `--runs` times, interleaved, through the CLI in a process of its own:

  parquet    `export --format parquet` of the whole ledger: rows/s (target ≥ 200k rows/s),
             against the floor of reading every row with bare sqlite3 in the same run
  markdown   `export --format markdown` of `--sample` sessions (and their subagents), chosen at
  html       random: sessions/s (target ≥ 50), against the floor of loading the same sessions
             (`session_detail`) with no rendering
  usage      `usage monthly` over the whole ledger: seconds (target ≤ 0.5 s)

Every measure reports the process tree's peak PSS (target ≤ 250 MB). Medians and ranges.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from backfill_bench import OUT, build_corpus, run_cli  # noqa: E402

from tracehouse.exports.parquet import EXPORTED  # noqa: E402
from tracehouse.store import open_store  # noqa: E402
from tracehouse.store.reads import session_detail  # noqa: E402

MB = 2**20


def ledger_of(corpus: Path, copies: int) -> Path:
    ledger = OUT / f"export-ledger-x{copies}.db"
    if not ledger.exists():
        partial = ledger.with_suffix(".partial.db")
        config = str(corpus / "sources.toml")
        run_cli(["sync", "backfill", "--config", config, "--store", str(partial), "--json", "-q"])
        partial.rename(ledger)
    return ledger


def raw_rows(ledger: Path) -> tuple[int, float]:
    """Every exported row read with bare sqlite3: the floor of a whole-ledger export."""
    conn = sqlite3.connect(ledger)
    start, rows = time.perf_counter(), 0
    for table in EXPORTED:
        for _ in conn.execute(f"SELECT * FROM {table.name}"):
            rows += 1
    conn.close()
    return rows, time.perf_counter() - start


def bare_load(ledger: Path, session_ids: list[str]) -> float:
    """The sessions loaded as an export loads them, rendered to nothing."""
    store = open_store(ledger)
    start = time.perf_counter()
    for session_id in session_ids:
        session_detail(store, session_id)
    store.close()
    return time.perf_counter() - start


def sample(ledger: Path, n: int, seed: int = 11) -> list[str]:
    conn = sqlite3.connect(ledger)
    ids = [r[0] for r in conn.execute("SELECT session_id FROM sessions WHERE NOT is_subagent")]
    conn.close()
    random.Random(seed).shuffle(ids)
    return sorted(ids[:n])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sample", type=int, default=300)
    args = parser.parse_args()

    corpus = build_corpus(args.corpus, args.copies)
    ledger = ledger_of(corpus, args.copies)
    chosen = sample(ledger, args.sample)
    labels = [arg for session_id in chosen for arg in ("--label", session_id)]
    out = OUT / "export-out"
    results: dict[str, list[tuple[float, float, int]]] = {}
    floors: dict[str, list[float]] = {"rows": [], "load": []}
    total_rows = 0
    for _ in range(args.runs):
        total_rows, seconds = raw_rows(ledger)
        floors["rows"].append(seconds)
        floors["load"].append(bare_load(ledger, chosen))
        for name, command in (
            ("parquet", ["export", "--format", "parquet"]),
            ("markdown", ["export", "--format", "markdown", *labels]),
            ("html", ["export", "--format", "html", *labels]),
            ("usage", ["usage", "monthly"]),
        ):
            shutil.rmtree(out, ignore_errors=True)
            where = ["--out", str(out)] if name != "usage" else []
            elapsed, (pss, _rss), report = run_cli([*command, *where, "--store", str(ledger),
                                                     "--json"])  # fmt: skip
            count = (
                report["written"]
                if isinstance(report, dict) and "written" in report
                else (sum(t["rows"] for t in report) if name == "parquet" else 0)
            )
            results.setdefault(name, []).append((elapsed, pss / MB, count))

    size = ledger.stat().st_size / MB
    print(f"ledger   {size:,.0f} MiB, {total_rows:,} exported rows; {args.runs} interleaved runs")
    rows_floor = statistics.median(floors["rows"])
    print(f"floor    bare read of every row {total_rows / rows_floor:,.0f} rows/s"
          f" ({rows_floor:.1f} s); bare load of {len(chosen)} sessions"
          f" {len(chosen) / statistics.median(floors['load']):,.0f} sessions/s")  # fmt: skip
    for name, runs in results.items():
        times = [t for t, _, _ in runs]
        peak = max(p for _, p, _ in runs)
        median = statistics.median(times)
        spread = f"{min(times):.2f}–{max(times):.2f} s"
        count = runs[0][2]
        if name == "parquet":
            rate = count / median
            print(f"{name:<8} {rate:,.0f} rows/s ({count:,} rows, median {median:.1f} s, {spread});"
                  f" {rate / (total_rows / rows_floor):.2f}× the bare read; peak PSS {peak:.0f} MB"
                  "  [target ≥ 200,000 rows/s, ≤ 250 MB]")  # fmt: skip
        elif name == "usage":
            print(f"{name:<8} monthly in {median:.2f} s ({spread}); peak PSS {peak:.0f} MB"
                  "  [target ≤ 0.5 s, ≤ 250 MB]")  # fmt: skip
        else:
            rate = count / median
            load_rate = len(chosen) / statistics.median(floors["load"])
            print(f"{name:<8} {rate:,.0f} sessions/s ({count:,} sessions with subagents, median"
                  f" {median:.1f} s, {spread}); {rate / load_rate:.2f}× the bare load;"
                  f" peak PSS {peak:.0f} MB  [target ≥ 50 sessions/s, ≤ 250 MB]")  # fmt: skip


if __name__ == "__main__":
    main()
