"""One transcript line far over `max_line_bytes`: time and memory of a backfill against reading
the file, measured in one run.

    uv run python bench/long_line_bench.py [--gigabytes 2] [--repeat 3]

Builds a copy of the test Claude Code home (tests/data/claude/home) whose main transcript holds,
between its real lines, one line of `--gigabytes` GB, in bench/out/long-line/. Then, interleaved
`--repeat` times (the page cache warmed first):

  raw read     every byte of the home read in 4 MiB blocks                      → s, MB/s
  without it   `sync backfill` of the same home without the long line: the command's own cost
  backfill     `sync backfill` of the home into a new ledger (default limit, 64 MiB)
               → s, less the run without it against the raw read, peak PSS of the process
               tree, the rejects

Targets (issue #40): the run takes about the time of reading the file, peak memory ≤ 300 MB,
the line is one reject naming its line and byte offset, and every other line is imported.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from backfill_bench import Run, spread  # noqa: E402

HOME = HERE.parent / "tests" / "data" / "claude" / "home"
BLOCK = 4 * 1024 * 1024


def build(target: Path, gigabytes: float) -> Path:
    """The home, with the long line inserted after the transcript's third line."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(HOME, target)
    main = next((target / ".claude" / "projects" / "-tmp-demo").glob("1111*.jsonl"))
    lines = main.read_bytes().split(b"\n")
    size = int(gigabytes * 1024**3)
    with main.open("wb") as f:
        f.write(b"\n".join(lines[:3]) + b"\n")
        f.write(b'{"type":"user","message":{"role":"user","content":"')
        chunk = b"x" * BLOCK
        for _ in range(size // BLOCK):
            f.write(chunk)
        f.write(b'"}}\n')
        f.write(b"\n".join(lines[3:]))
    return main


def raw_read(home: Path) -> tuple[int, float]:
    start, total = time.perf_counter(), 0
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        with path.open("rb") as f:
            while block := f.read(BLOCK):
                total += len(block)
    return total, time.perf_counter() - start


def backfill(home: Path, out: Path) -> Run:
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        command = ["sync", "backfill", "--home", str(home), "--source", "claude-code"]
        return Run([*command, "--store", f"{tmp}/ledger.db", "--json", "-q"])


def seconds_of(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} s (range {min(values):.2f}–{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.gigabytes <= 0 or args.repeat < 1:
        raise SystemExit("--gigabytes must be above 0 and --repeat at least 1")
    out = HERE / "out" / "long-line"
    home = out / "home"
    main_file = build(home, args.gigabytes)
    print(f"home        {main_file.stat().st_size / 1e6:,.0f} MB in {main_file.name}")
    raw_read(home)  # warm the page cache
    plain = out / "plain"
    shutil.rmtree(plain, ignore_errors=True)
    shutil.copytree(HOME, plain)
    reads: list[float] = []
    bases: list[float] = []
    walls: list[float] = []
    peaks: list[float] = []
    for _ in range(args.repeat):
        total, seconds = raw_read(home)
        reads.append(seconds)
        bases.append(backfill(plain, out).wall)
        run = backfill(home, out)
        walls.append(run.wall)
        peaks.append(run.pss / 1e6)
    extra = statistics.median(walls) - statistics.median(bases)
    print(f"raw read    {seconds_of(reads)}  = {total / 1e6 / statistics.median(reads):,.0f} MB/s")
    print(f"without it  {seconds_of(bases)}")
    print(f"backfill    {seconds_of(walls)}  = +{extra:.2f} s for the line,"
          f" {extra / statistics.median(reads):.1f}× the raw read")  # fmt: skip
    print(f"peak PSS    {spread(peaks, 'MB')}")
    report = run.report
    rejects = report.get("rejects") or []
    print(f"rejects     {len(rejects)}: " + "; ".join(
        f"{r.get('location')}: {r.get('reason')}" for r in rejects[:3]))  # fmt: skip
    print(f"sessions    {report.get('sessions')}")
    ok = len(rejects) == 1 and max(peaks) <= 300
    print("target: one reject, peak ≤ 300 MB —", "met" if ok else "NOT met")


if __name__ == "__main__":
    main()
