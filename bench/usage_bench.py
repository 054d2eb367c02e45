"""Usage, blocks and the status line on a large ledger: how long each waits from process start.

    uv run python bench/usage_bench.py [--copies 24] [--runs 15] [--fresh] [--before SRC]

Builds (or reuses) backfill_bench's replicated corpus of every source and its ledger (24
copies: the 880 MB bench ledger), then runs each command --runs times in a process of its own,
interleaved, and prints p50, p95 and the range of each beside two floors measured in the same
runs: the interpreter alone (`python -c pass`) and `tracehouse --version` (the CLI's start).

  statusline  `tracehouse statusline` fed a Claude Code session's JSON (the price memo warm
              after its first run, as it is after a day's first message); target p95 ≤ 50 ms
  usage       `tracehouse usage` (the daily report); target p95 ≤ 100 ms
  blocks      `tracehouse usage blocks`

--before SRC adds each command as the `src/` of another checkout runs it (a release before:
`git worktree add /tmp/before <rev>`, then `--before /tmp/before/src`), in the same rounds, on
a copy of the ledger without the record of the migrations it does not know.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from backfill_bench import bench_ledger, build_corpus  # noqa: E402

TRACEHOUSE = str(Path(sys.executable).with_name("tracehouse"))


def timed(command: list[str], stdin: str = "", env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=stdin.encode(), stdout=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--fresh", action="store_true", help="rebuild the ledger")
    parser.add_argument("--before", type=Path, help="another checkout's src/ to time beside")
    parser.add_argument("--fixtures", type=Path,
                        default=Path(os.environ.get("TRACEHOUSE_CORPUS", HERE.parent.parent
                                                    / "shared" / "fixtures")))  # fmt: skip
    args = parser.parse_args()
    if args.copies < 1 or args.runs < 2:
        raise SystemExit("--copies must be at least 1 and --runs at least 2")
    if args.before is not None and not (args.before / "tracehouse").is_dir():
        raise SystemExit(f"--before {args.before}: no tracehouse package there")
    ledger = bench_ledger(build_corpus(args.fixtures, args.copies), "usage-ledger.db", args.fresh)
    with sqlite3.connect(ledger) as conn:
        (session,) = conn.execute(
            "SELECT source_session_id FROM sessions WHERE source_provider = 'claude-code'"
            " ORDER BY total_tokens DESC LIMIT 1"
        ).fetchone()
        (turns,) = conn.execute("SELECT count(*) FROM turns").fetchone()
    print(f"ledger   {ledger.stat().st_size / 1e6:,.0f} MB, {turns:,} turns")
    state = tempfile.mkdtemp()
    # As a user's machine runs them: bytecode cached (a shell that sets PYTHONDONTWRITEBYTECODE
    # would time compiling every module of the program on every run instead).
    env = {**os.environ, "XDG_STATE_HOME": state, "TRACEHOUSE_PROGRESS": "false"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    store = ["--store", str(ledger)]
    payload = json.dumps({"session_id": session, "model": {"display_name": "Opus"}})
    commands = {
        "python": ([sys.executable, "-c", "pass"], ""),
        "--version": ([TRACEHOUSE, "--version"], ""),
        "statusline": ([TRACEHOUSE, "statusline", *store], payload),
        "usage": ([TRACEHOUSE, "usage", *store], ""),
        "blocks": ([TRACEHOUSE, "usage", "blocks", *store], ""),
    }
    envs = dict.fromkeys(commands, env)
    if args.before is not None:  # its own state directory: its caches are its own
        before = {**env, "PYTHONPATH": str(args.before.resolve()),
                  "XDG_STATE_HOME": tempfile.mkdtemp()}  # fmt: skip
        older = ["--store", str(older_ledger(ledger, before))]
        for name in ("statusline", "usage", "blocks"):
            command, stdin = commands[name]
            commands[f"{name} (before)"] = ([*command[:-2], *older], stdin)
            envs[f"{name} (before)"] = before
    for name, (command, stdin) in commands.items():  # warm: the page cache, the price memo
        timed(command, stdin, envs[name])
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, (command, stdin) in commands.items():
            times[name].append(timed(command, stdin, envs[name]))
    print(f"{args.runs} interleaved runs each, from process start to exit")
    for name, seconds in times.items():
        ordered = sorted(seconds)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        low, high = ordered[0] * 1000, ordered[-1] * 1000
        print(f"  {name:<20} p50 {statistics.median(seconds) * 1000:6.0f} ms   p95"
              f" {p95 * 1000:6.0f} ms   range {low:.0f}–{high:.0f} ms")  # fmt: skip


def older_ledger(ledger: Path, env: dict[str, str]) -> Path:
    """A copy of the ledger that the release before opens: without the record of the migrations
    it does not know (it refuses a ledger a newer tracehouse wrote), whose tables it ignores."""
    copy = ledger.with_name(f"before-{ledger.name}")
    known = subprocess.run(
        [sys.executable, "-c", "import json; from tracehouse.store.sqlite.migrations import"
         " known_migrations as k; print(json.dumps(k()))"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    shutil.copyfile(ledger, copy)
    with sqlite3.connect(copy) as conn:
        names = json.loads(known)
        conn.execute(f"DELETE FROM _sqlite_migrations WHERE name NOT IN"
                     f" ({', '.join('?' * len(names))})", names)  # fmt: skip
    return copy


if __name__ == "__main__":
    main()
