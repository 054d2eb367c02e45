"""A run with nothing new in a home of many folders, against the same run in a small home.

Aider and Crush keep their logs inside projects, found under `project_roots` (the home, two
levels down): a home of 100,000 folders is 100,000 places each of them must look. Three homes,
each with the same Claude Code logs (tests/data): `small` alone, `flat` with 100,000 empty
folders beside them, `nested` with 100 folders of 1,000 each. Each home is backfilled once;
then `sync backfill` with nothing new runs --repeat times in each, interleaved, in a process of
its own as cron runs it. Printed: medians and ranges, each home's ratio to `small`, and two
floors: one bare Python walk that lists the folders and tries one file name in each (what a
source that lists each run cannot do with less), and one `stat` of each folder (what a run
that notices a log added to any folder cannot do with less, with listings kept between runs).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOGS = HERE.parent / "tests" / "data" / "claude" / "home"


def make_homes(work: Path, folders: int) -> dict[str, Path]:
    homes = {name: work / name for name in ("small", "flat", "nested")}
    for home in homes.values():
        shutil.copytree(LOGS, home)
    for i in range(folders):
        (homes["flat"] / f"d{i}").mkdir()
    per = max(1, folders // 100)
    for i in range(folders):
        (homes["nested"] / f"data{i // per}" / f"p{i}").mkdir(parents=True, exist_ok=True)
    return homes


def run(home: Path, ledger: Path) -> float:
    command = [sys.executable, "-m", "tracehouse.cli.app", "sync", "backfill", "--home",
               str(home), "--store", str(ledger), "-q"]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, check=True, env={**os.environ, "TRACEHOUSE_PROGRESS": "false"})
    return time.perf_counter() - started


def walk_floor(home: Path) -> float:
    """List every folder two levels down and try one file name in each: what one source that
    lists each run cannot do with less."""
    started = time.perf_counter()
    for first in os.scandir(home):
        if not first.is_dir() or first.name.startswith("."):
            continue
        for path in [first.path, *(e.path for e in os.scandir(first.path) if e.is_dir())]:
            with contextlib.suppress(OSError):
                os.lstat(os.path.join(path, ".aider.chat.history.md"))
    return time.perf_counter() - started


def stat_floor(home: Path) -> float:
    """One `stat` of every folder two levels down (the paths listed beforehand): what a run that
    must notice a log added to any of them cannot do with less, whatever it keeps."""
    paths = []
    for first in os.scandir(home):
        if first.is_dir() and not first.name.startswith("."):
            paths += [first.path, *(e.path for e in os.scandir(first.path) if e.is_dir())]
    started = time.perf_counter()
    for path in paths:
        os.stat(path)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if args.folders < 1 or args.repeat < 1:
        raise SystemExit("--folders and --repeat must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(work / "xdg")
        os.environ["XDG_STATE_HOME"] = str(work / "xdg-state")  # the kept folder listings
        homes = make_homes(work, args.folders)
        ledgers = {name: work / f"{name}.db" for name in homes}
        for name, home in homes.items():
            run(home, ledgers[name])  # the first backfill: what later runs find unchanged
        times: dict[str, list[float]] = {name: [] for name in homes}
        floors: dict[str, list[float]] = {name: [] for name in homes}
        stats: dict[str, list[float]] = {name: [] for name in homes}
        for _ in range(args.repeat):
            for name, home in homes.items():
                times[name].append(run(home, ledgers[name]))
                floors[name].append(walk_floor(home))
                stats[name].append(stat_floor(home))
        small = statistics.median(times["small"])
        print(f"nothing new, {args.folders:,} folders, {args.repeat} interleaved runs each")
        for name in homes:
            median = statistics.median(times[name])
            print(f"  {name:<7} {median:6.2f} s (range {min(times[name]):.2f}–"
                  f"{max(times[name]):.2f})  {median / small:5.2f}x small   floors: one"
                  f" source's walk {statistics.median(floors[name]):.2f} s, one stat a folder"
                  f" {statistics.median(stats[name]):.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
