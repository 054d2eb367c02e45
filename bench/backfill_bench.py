"""Backfill throughput against its floors, measured in one run.

    uv run python bench/backfill_bench.py [--copies 95] [--corpus ../shared/fixtures]

Replicates every Claude Code home and Codex rollout of the fixture corpus `--copies` times
(about 16 MB each, so 95 copies ≈ 1.5 GB) into bench/out/corpus/, each copy under a fresh
project directory and fresh session file names, with every uuid inside the files made the
copy's own too, so every copy is a distinct set of sessions with fresh ledger ids whose
links stay within the copy. Then:

  raw read        read every file's bytes (page cache warm)                  → MB/s
  bare parse      orjson.loads over every line of the same files             → MB/s
  backfill        `tracehouse sync backfill` into a new ledger (a subprocess) → MB/s, ratios
  peak memory     the backfill's whole process tree (main + workers), sampled: summed PSS
  no-change       the same command again: wall time of the command, and of the sync itself
  append          10 lines appended to the largest transcript, the command again

Targets (issue #3): backfill ≥ 100 MB/s; peak memory ≤ 250 MB; no-change ≤ 0.5 s;
append ≤ no-change + 0.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson
import psutil

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"


def build_corpus(source: Path, copies: int) -> Path:
    # v2: uuids are rewritten inside the files too, so no two copies name the same parent
    target = OUT / "corpus" / f"x{copies}-v2"
    marker = target / ".complete"
    if marker.exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    homes = sorted(p for p in (source / "homes").glob("*/.claude") if (p / "projects").is_dir())
    rollouts = sorted(
        path for home in sorted((source / "homes").glob("*/.codex"))
        for path in home.glob("*sessions/**/rollout-*")
    )  # fmt: skip
    projects = target / ".claude" / "projects"
    for n in range(copies):
        for home in homes:
            for project in (home / "projects").iterdir():
                dest = projects / f"{project.name}-c{n:03d}"
                for path in project.rglob("*"):
                    if not path.is_file():
                        continue
                    rel = path.relative_to(project)
                    # Session ids are file stems (and the subagent dir names): give each copy
                    # its own by rewriting the first uuid group.
                    parts = [_fresh(part, n) for part in rel.parts]
                    _copy_fresh(path, dest.joinpath(*parts), n)
        for path in rollouts:
            # A rollout's thread id is the uuid that ends its name: a fresh one per copy.
            stem, dot, ext = path.name.rpartition(".")
            name = stem[:-36] + _fresh(stem[-36:], n) + dot + ext
            home = next(p for p in path.parents if p.name == ".codex")
            _copy_fresh(path, target / ".codex" / path.parent.relative_to(home) / name, n)
    marker.write_text("ok")
    return target


_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _copy_fresh(path: Path, out: Path, n: int) -> None:
    """The file with every uuid in it made this copy's: a child names its own copy's parent
    (or a parent absent from the corpus that no other copy names), as on another machine."""
    prefix = f"{n:08x}".encode()
    data = _UUID.sub(lambda m: prefix + m.group()[8:], path.read_bytes())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)


def _fresh(name: str, n: int) -> str:
    if len(name) >= 36 and name[8] == "-" and name[13] == "-":
        return f"{n:08x}" + name[8:]
    return name


def files_of(corpus: Path) -> list[Path]:
    return sorted(
        p
        for p in corpus.rglob("*.json*")
        if p.suffix == ".jsonl" or p.name.startswith("rollout-")  # not subagent .meta.json
    )


def raw_read(files: list[Path]) -> tuple[int, float]:
    start = time.perf_counter()
    total = 0
    for path in files:
        with path.open("rb") as f:
            total += len(f.read())
    return total, time.perf_counter() - start


def bare_parse(files: list[Path]) -> float:
    start = time.perf_counter()
    loads = orjson.loads
    for path in files:
        data = path.read_bytes()
        if path.suffix == ".json":  # a G0 Codex rollout: one document
            loads(data)
            continue
        for line in data.splitlines():
            if line:
                loads(line)
    return time.perf_counter() - start


def run_cli(args: list[str]) -> tuple[float, tuple[int, int], dict[str, object]]:
    """Wall time, the process tree's peak memory (sampled every 20 ms) and the --json report.

    Memory is the peak of the tree's summed PSS (shared libraries counted once across the
    processes, not once per process as summed RSS would) and the largest single process RSS.
    """
    command = [sys.executable, "-c", "from tracehouse.cli.app import main; main()", *args]
    start = time.perf_counter()
    # As on a user's machine, bytecode caches are written and reused between runs.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    root = psutil.Process(process.pid)
    peak_pss = peak_rss = 0
    while process.poll() is None:
        try:
            tree = [p.memory_full_info() for p in [root, *root.children(recursive=True)]]
            peak_pss = max(peak_pss, sum(m.pss for m in tree))
            peak_rss = max(peak_rss, *(m.rss for m in tree))
        except psutil.Error:
            pass
        time.sleep(0.02)
    out, err = process.communicate()
    elapsed = time.perf_counter() - start
    if process.returncode not in (0, 1):
        raise SystemExit(f"backfill failed ({process.returncode}): {err.decode()[-2000:]}")
    return elapsed, (peak_pss, peak_rss), json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=95)
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    args = parser.parse_args()

    t0 = time.perf_counter()
    corpus = build_corpus(args.corpus, args.copies)
    files = files_of(corpus)
    print(f"corpus: {len(files):,} files in {corpus} (ready in {time.perf_counter() - t0:.1f}s)")
    size, read_s = raw_read(files)
    mb = size / 1e6
    parse_s = bare_parse(files)
    print(f"floor    raw read            {mb / read_s:8.0f} MB/s   ({mb:,.0f} MB in {read_s:.2f}s)")
    print(f"floor    bare orjson.loads   {mb / parse_s:8.0f} MB/s   ({parse_s:.2f}s)")

    ledger = OUT / "bench-ledger.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{ledger}{suffix}").unlink(missing_ok=True)
    common = ["sync", "backfill", "--home", str(corpus), "--store", str(ledger), "--json", "-q"]
    wall, peak, report = run_cli(common)
    sync_s = float(report["seconds"])  # type: ignore[arg-type]
    print(
        f"backfill sync backfill       {mb / wall:8.0f} MB/s   ({wall:.2f}s wall, "
        f"{sync_s:.2f}s in sync) = {mb / wall / (mb / parse_s):.0%} of bare parse,"
        f" {mb / wall / (mb / read_s):.1%} of raw read"
    )
    print(
        f"         sessions {report['sessions']}, rows {report['rowsWritten']:,},"
        f" rejects {len(report['rejects'])}"
    )  # type: ignore[arg-type]
    pss, rss = peak
    print(
        f"memory   peak PSS of the tree {pss / 2**20:7.0f} MB    (main + workers, sampled;"
        f" largest single process RSS {rss / 2**20:.0f} MB)"
    )

    # This machine's timings vary from run to run: the no-change figure is the median of five.
    runs = [run_cli(common) for _ in range(5)]
    wall0 = statistics.median(r[0] for r in runs)
    again = runs[-1][2]
    print(
        f"rerun    no change           {wall0:8.2f} s     (command, median of 5;"
        f" {again['seconds']}s in sync, {again['unchanged']:,} files unchanged)"
    )
    largest = max(files, key=lambda p: p.stat().st_size)
    lines = largest.read_bytes().splitlines(keepends=True)
    with largest.open("ab") as f:
        f.writelines(line if line.endswith(b"\n") else line + b"\n" for line in lines[-10:])
    wall1, _, appended = run_cli(common)
    print(
        f"rerun    10 lines appended   {wall1:8.2f} s     (command; {appended['seconds']}s in"
        f" sync, {appended['bytesRead']:,} bytes read) = no-change + {wall1 - wall0:.2f}s"
    )
    os.truncate(largest, sum(len(x) for x in lines))  # leave the corpus as built


if __name__ == "__main__":
    main()
