"""Backfill throughput against its floors, measured in one run.

    uv run python bench/backfill_bench.py [--copies 24] [--repeat 3] [--corpus ../shared/fixtures]
                                          [--workers 1,2,4,8,16] [--before SRC] [--per-source]

Replicates every fixture source (Claude Code, Codex, Cursor, Gemini CLI, OpenCode, Cursor
agent) `--copies` times with fresh ids (`bench/corpus.py`; about 42 MB a copy, so 24 copies ≈
1 GB) into bench/out/corpus/, and names every root in its `sources.toml`. Then:

  raw read        read every file's bytes (page cache warm)                  → MB/s
  bare parse      orjson.loads over every JSON line, document and database value → MB/s
  parse only      `sync backfill --dry-run` with one worker (one core)         → MB/s, ratio
  backfill        `sync backfill` into a new ledger, default settings        → MB/s, ratios
  written         bytes the backfill wrote to disk (/usr/bin/time), against the bytes read
  peak memory     the backfill's whole process tree (main + workers), sampled: summed PSS
  no-change       the same command again: wall time of the command, and of the sync itself
  append          10 lines appended to the largest transcript, the command again

The floors, parse-only and backfill runs are interleaved `--repeat` times (the page cache
warmed first): medians and ranges, ratios against the median floor.

`--workers 1,2,4,8,16` runs a sweep after the floors instead of the default-settings runs: at
each worker count a backfill from an empty ledger and a parse-only run (`--dry-run`), interleaved
with the others `--repeat` times, each printed with its speed-up over the first count, the
tree's peak memory, and where the time went (the median run's phases, summed over processes).

`--before SRC` (another checkout's `src/`: `git worktree add /tmp/before <rev>`) runs its
parse-only and backfill beside these, interleaved in the same rounds, each printed with the
ratio of this checkout's to it. `--per-source` then prints each source's parse-only rate (one
worker, the bytes its report read over its seconds in sync), beside the `--before` one's.

Targets (issue #20): backfill ≥ 100 MB/s, peak memory ≤ 250 MB, parse only ≥ 150 MB/s (≥ 35% of
bare parse), written ≤ 1.5× read, no-change ≤ 0.3 s, append ≤ no-change + 0.2 s. Issue #46: on
16 cores, backfill at the default ≥ 4x one worker, parse only ≥ 8x, ≤ 1 GB at 16 workers.
"""

from __future__ import annotations

import argparse
import contextlib
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

import orjson
import psutil

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

from corpus import build  # noqa: E402

SKIP = {"sources.toml", ".complete"}


def files_of(corpus: Path) -> list[Path]:
    return sorted(
        p
        for p in corpus.rglob("*")
        if p.is_file() and p.name not in SKIP and not p.name.endswith(("-shm", ".backup"))
    )


def raw_read(files: list[Path]) -> tuple[int, float]:
    start = time.perf_counter()
    total = 0
    for path in files:
        with path.open("rb") as f:
            total += len(f.read())
    return total, time.perf_counter() - start


def bare_parse(files: list[Path]) -> float:
    """The floor of reading what each file holds: JSON lines and documents decoded, databases
    read row by row with their JSON values decoded."""
    start = time.perf_counter()
    for path in files:
        if path.suffix in (".db", ".vscdb"):
            _bare_database(path)
            continue
        data = path.read_bytes()
        if path.suffix == ".jsonl":
            for line in data.splitlines():
                if line:
                    _decode(line)
        elif path.suffix == ".json":
            _decode(data)
    return time.perf_counter() - start


def _decode(data: str | bytes) -> None:
    with contextlib.suppress(orjson.JSONDecodeError):
        orjson.loads(data)


def _bare_database(path: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:  # never open the corpus copy in place
        for suffix in ("", "-wal"):
            if Path(f"{path}{suffix}").exists():
                shutil.copyfile(f"{path}{suffix}", f"{scratch}/db{suffix}")
        conn = sqlite3.connect(f"{scratch}/db")
        try:
            query = "SELECT name FROM sqlite_master WHERE type = 'table'"
            for (table,) in conn.execute(query).fetchall():
                for row in conn.execute(f'SELECT * FROM "{table}"'):
                    for value in row:
                        if isinstance(value, str | bytes) and value[:1] in ("{", "[", b"{", b"["):
                            _decode(value)
        except sqlite3.DatabaseError:
            pass
        finally:
            conn.close()


def build_corpus(fixtures: Path, copies: int) -> Path:
    """The replicated corpus under bench/out, built once per number of copies (and version);
    `sources.toml` in it names every root, for `--config`."""
    return build(fixtures, copies, OUT / "corpus")


def bench_ledger(corpus: Path, name: str, fresh: bool) -> Path:
    """For the other benches: a ledger of the whole corpus under bench/out, backfilled once
    (again with `fresh`)."""
    ledger = OUT / name
    if fresh or not ledger.exists():
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{ledger}{suffix}").unlink(missing_ok=True)
        wall, _peak, _report = run_cli(["sync", "backfill", "--config",
                                        str(corpus / "sources.toml"), "--store", str(ledger),
                                        "-q", "--json"])  # fmt: skip
        print(f"ledger   built in {wall:.1f} s ({ledger.stat().st_size / 1e6:,.0f} MB)")
    return ledger


def run_cli(args: list[str]) -> tuple[float, tuple[int, int], dict[str, object]]:
    """For the other benches: one command's wall time, (peak PSS, largest RSS) and report."""
    run = Run(args)
    return run.wall, (run.pss, run.rss), run.report


class Run:
    """One command: wall time, the tree's peak memory, bytes written, and its --json report."""

    def __init__(
        self, args: list[str], command: list[str] | None = None, env: dict[str, str] | None = None
    ) -> None:
        """`tracehouse ARGS`, or another program's `command` (a peer's: no report) in `env`."""
        self.env = env
        self.tracehouse = command is None
        if command is None:
            command = [sys.executable, "-c", "from tracehouse.cli.app import main; main()", *args]
        counted = Path("/usr/bin/time").exists()
        with tempfile.NamedTemporaryFile("r", suffix=".time") as outputs:
            # GNU time: the blocks written and the CPU seconds (user + system) of the command
            # and of every worker it waited for
            if counted:
                command = ["/usr/bin/time", "-f", "%O %U %S", "-o", outputs.name, *command]
            self._run(command)
            text = outputs.read().strip().splitlines() if counted else []
        figures = text[-1].split() if text else []
        counts = len(figures) == 3 and figures[0].isdigit()
        self.written = int(figures[0]) * 512 if counts else None
        self.cpu = float(figures[1]) + float(figures[2]) if counts else None

    def _run(self, command: list[str]) -> None:
        """Memory is the peak of the tree's summed PSS (shared libraries counted once across
        the processes, not once per process as summed RSS would), sampled every 20 ms."""
        start = time.perf_counter()
        # As on a user's machine, bytecode caches are written and reused between runs.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**env, **(self.env or {})}
        )
        root = psutil.Process(process.pid)
        self.pss = self.rss = 0
        while process.poll() is None:
            try:
                tree = [p.memory_full_info() for p in [root, *root.children(recursive=True)]]
                self.pss = max(self.pss, sum(m.pss for m in tree))
                self.rss = max(self.rss, *(m.rss for m in tree))
            except psutil.Error:
                pass
            time.sleep(0.02)
        out, err = process.communicate()
        self.wall = time.perf_counter() - start
        if process.returncode not in (0, 1):
            raise SystemExit(f"{command[-1]} failed ({process.returncode}): {err.decode()[-2000:]}")
        self.report = json.loads(out) if self.tracehouse else {}


def cpu_per_gb(runs: list[Run], mb: float, before: list[Run] | None = None) -> None:
    """CPU seconds per GB read, summed over the command's processes (issue #71's figure)."""
    spent = [r.cpu * 1000 / mb for r in runs if r.cpu is not None]
    if not spent:
        print("cpu      not measured (no GNU time at /usr/bin/time)")
        return
    line = f"cpu      {spread(spent, 'CPU-s per GB')}"
    then = [r.cpu * 1000 / mb for r in before or () if r.cpu is not None]
    if then:
        ratio = statistics.median(spent) / statistics.median(then)
        line += f"   before {spread(then, 'CPU-s per GB').strip()} → this checkout {ratio:.2f}x"
    print(line)


def spread(values: list[float], unit: str, scale: float = 1.0) -> str:
    """Median and range of a figure over the repeats."""
    med = statistics.median(values)
    return f"{med * scale:8.0f} {unit} (range {min(values) * scale:.0f}–{max(values) * scale:.0f})"


def peer_agsearch(corpus: Path, ledger: Path, repeat: int) -> None:
    """tracehouse against agsearch (PyPI; `pip install agsearch` puts it on PATH) on what both
    read, the corpus's Claude Code and Codex logs: agsearch's full `--reindex` with the corpus
    as its home and a fresh cache, and a tracehouse backfill of the same two sources into a new
    ledger of its own (the reruns below use the main one), interleaved `repeat` times. Issue
    #46's target: ≥ 1.4x its speed at ≤ 1/3 its memory."""
    agsearch = shutil.which("agsearch")
    if agsearch is None:
        print("peer     agsearch: not installed (pip install agsearch), no ratio")
        return
    mb = sum(p.stat().st_size for p in files_of(corpus / ".claude") + files_of(corpus / ".codex"))
    mb /= 1e6
    ours, theirs = [], []
    sources = [
        "--source",
        f"claude-code={corpus / '.claude'}",
        "--source",
        f"codex={corpus / '.codex'}",
    ]
    for _ in range(repeat):
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{ledger}{suffix}").unlink(missing_ok=True)
        ours.append(Run(["sync", "backfill", "--store", str(ledger), "--json", "-q", *sources]))
        with tempfile.TemporaryDirectory(prefix="agsearch-cache-") as cache:
            env = {"HOME": str(corpus), "XDG_CACHE_HOME": cache}
            theirs.append(Run([], [agsearch, "--reindex", "-n", "no-such-words-anywhere"], env))
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{ledger}{suffix}").unlink(missing_ok=True)
    wall = statistics.median(r.wall for r in ours)
    peer = statistics.median(r.wall for r in theirs)
    pss = statistics.median(r.pss for r in ours) / 2**20
    peer_pss = statistics.median(r.pss for r in theirs) / 2**20
    print(
        f"peer     Claude Code + Codex, {mb:,.0f} MB: tracehouse {wall:.1f} s {pss:.0f} MB,"
        f" agsearch --reindex {peer:.1f} s {peer_pss:.0f} MB (medians of {repeat})"
        f" = {peer / wall:.2f}x its speed at {pss / peer_pss:.2f}x its memory"
    )


def _phases(runs: list[Run]) -> str:
    """Where the median run's time went (`--json` phases)."""
    middle = sorted(runs, key=lambda r: r.wall)[(len(runs) - 1) // 2]
    return " ".join(f"{k} {v:.1f}" for k, v in middle.report.get("phases", {}).items())


def worker_counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected counts like 1,2,4") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every count must be at least 1")
    return counts


def sweep(counts: list[int], repeat: int, sources_toml: Path, common: list[str], mb: float) -> None:
    """Backfill and parse-only at each worker count, interleaved; speed-ups against 1 worker
    (or the smallest count swept)."""
    configs = {}
    for n in counts:
        configs[n] = OUT / f"workers-{n}.toml"
        configs[n].write_text(f"workers = {n}\n{sources_toml.read_text()}")
    ledger = Path(common[common.index("--store") + 1])
    runs: dict[tuple[str, int], list[Run]] = {}
    for _ in range(repeat):
        for n in counts:
            for kind, flags in (("backfill", []), ("parse", ["--dry-run"])):
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(f"{ledger}{suffix}").unlink(missing_ok=True)
                run = Run([*common, "--config", str(configs[n]), *flags])
                runs.setdefault((kind, n), []).append(run)
    print(f"sweep    {os.cpu_count()} cores; phases: seconds summed over the processes")
    for kind in ("backfill", "parse"):
        base = statistics.median(r.wall for r in runs[(kind, counts[0])])
        for n in counts:
            done = runs[(kind, n)]
            walls = [r.wall for r in done]
            middle = sorted(done, key=lambda r: r.wall)[(len(done) - 1) // 2]
            phases = _phases(done)
            read = int(middle.report["bytesRead"])
            written = f" written {middle.written / read:.2f}x" if middle.written and read else ""
            print(
                f"{kind:8} {n:2} workers  {spread([mb / w for w in walls], 'MB/s')}"
                f"  {base / statistics.median(walls):4.1f}x of {counts[0]}"
                f"  peak PSS {statistics.median(r.pss for r in done) / 2**20:4.0f} MB{written}"
                f"  rows {middle.report['rowsWritten']:,}\n         phases (s): {phases}"
            )


def per_source(sources_toml: Path, one_core: Path, common: list[str], repeat: int,
               before: dict[str, str] | None) -> None:  # fmt: skip
    """Each source's parse-only rate on one worker: the bytes its report read over its
    seconds in sync (a process's start left out: it would swamp the small sources)."""
    import tomllib

    roots = tomllib.loads(sources_toml.read_text())["sources"]
    names = sorted(roots)
    sides = {"this": None, **({"before": before} if before else {})}
    rates: dict[tuple[str, str], list[float]] = {}
    read: dict[str, int] = {}
    for _ in range(repeat):
        for name in names:
            for side, env in sides.items():
                for suffix in ("", "-wal", "-shm", "-journal"):  # an empty ledger: all is new
                    Path(f"{common[common.index('--store') + 1]}{suffix}").unlink(missing_ok=True)
                only = [f"--source={name}={root}" for root in roots[name]]  # a name alone: ~
                run = Run([*common, "--config", str(one_core), "--dry-run", *only], env=env)
                read[name] = int(run.report["bytesRead"])  # type: ignore[call-overload]
                seconds = max(float(run.report["seconds"]), 1e-3)  # type: ignore[arg-type]
                rates.setdefault((name, side), []).append(read[name] / 1e6 / seconds)
    print("per source, parse only on one worker (MB/s in sync, median and range):")
    for name in names:
        line = f"  {name:<14} {read[name] / 1e6:7.1f} MB  {spread(rates[name, 'this'], 'MB/s')}"
        if before:
            then = statistics.median(rates[name, "before"])
            ratio = f"{statistics.median(rates[name, 'this']) / then:.2f}x" if then else "—"
            line += f"   before {spread(rates[name, 'before'], 'MB/s')}  {ratio}"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    parser.add_argument("--workers", type=worker_counts, default=[], help="e.g. 1,2,4,8,16")
    parser.add_argument("--before", type=Path, help="another checkout's src/ to run beside")
    parser.add_argument("--per-source", action="store_true", help="each source's parse rate")
    args = parser.parse_args()
    if args.copies < 1 or args.repeat < 1:
        raise SystemExit("--copies and --repeat must be at least 1")
    if args.before is not None and not (args.before / "tracehouse").is_dir():
        raise SystemExit(f"--before {args.before}: no tracehouse package there")
    before = {"PYTHONPATH": str(args.before.resolve())} if args.before else None

    t0 = time.perf_counter()
    corpus = build_corpus(args.corpus, args.copies)
    files = files_of(corpus)
    print(f"corpus: {len(files):,} files in {corpus} (ready in {time.perf_counter() - t0:.1f}s)")
    size, _ = raw_read(files)  # warm: a floor measured from disk would flatter every ratio
    mb = size / 1e6

    sources_toml = corpus / "sources.toml"
    one_core = OUT / "one-worker.toml"
    one_core.write_text(f"workers = 1\n{sources_toml.read_text()}")
    ledger = OUT / "bench-ledger.db"
    common = ["sync", "backfill", "--store", str(ledger), "--json", "-q"]
    dry, full, reads, parses = [], [], [], []
    dry_before: list[Run] = []
    full_before: list[Run] = []
    for _ in range(args.repeat):  # interleaved with the floors: a noisy minute hits all alike
        reads.append(raw_read(files)[1])
        parses.append(bare_parse(files))
        if args.workers:  # the sweep's own runs instead
            continue
        for run, config, flags, env in (
            (dry, one_core, ["--dry-run"], None),
            (full, sources_toml, [], None),
            *(((dry_before, one_core, ["--dry-run"], before),
               (full_before, sources_toml, [], before)) if before else ()),
        ):  # fmt: skip
            for suffix in ("", "-wal", "-shm", "-journal"):  # each from an empty ledger
                Path(f"{ledger}{suffix}").unlink(missing_ok=True)
            run.append(Run([*common, "--config", str(config), *flags], env=env))
    parse_s = statistics.median(parses)
    print(
        f"floor    raw read            {spread([mb / t for t in reads], 'MB/s')}   ({mb:,.0f} MB)"
    )
    print(f"floor    bare parse          {spread([mb / t for t in parses], 'MB/s')}")
    if args.workers:
        sweep(args.workers, args.repeat, sources_toml, common, mb)
        return
    dry_rates = [mb / r.wall for r in dry]
    print(
        f"parse    --dry-run, 1 worker {spread(dry_rates, 'MB/s')}"
        f" = {statistics.median(dry_rates) / (mb / parse_s):.0%} of bare parse"
    )
    rates = [mb / r.wall for r in full]
    last = full[-1]
    print(
        f"backfill sync backfill       {spread(rates, 'MB/s')}"
        f" = {statistics.median(rates) / (mb / parse_s):.0%} of bare parse"
        f" ({statistics.median(r.wall for r in full):.2f}s wall,"
        f" {last.report['seconds']}s in sync)"
    )
    for name, ours, theirs in (("parse", dry, dry_before), ("backfill", full, full_before)):
        if theirs:
            rate, then = (statistics.median(mb / r.wall for r in runs) for runs in (ours, theirs))
            print(f"before   {name:<8} {spread([mb / r.wall for r in theirs], 'MB/s')}"
                  f" → this checkout {rate / then:.2f}x")  # fmt: skip
    report = last.report
    print(
        f"         sessions {report['sessions']}, rows {report['rowsWritten']:,},"
        f" rejects {len(report['rejects'])}"  # type: ignore[arg-type]
    )
    print(f"         phases (s, summed over processes, median run): {_phases(full)}")
    cpu_per_gb(full, mb, full_before)
    written = [r.written for r in full if r.written is not None]
    if written:
        read = int(report["bytesRead"])  # type: ignore[call-overload]
        print(
            f"disk     written {statistics.median(written) / 1e6:,.0f} MB for"
            f" {read / 1e6:,.0f} MB read = {statistics.median(written) / read:.2f}x"
            f" (range {min(written) / read:.2f}–{max(written) / read:.2f}x;"
            f" ledger {sum(p.stat().st_size for p in OUT.glob('bench-ledger.db*')) / 1e6:,.0f} MB)"
        )
    else:
        print("disk     written: not measured (no GNU time at /usr/bin/time)")
    print(
        f"memory   peak PSS of the tree {spread([r.pss / 2**20 for r in full], 'MB')}"
        f"    (largest single process RSS {max(r.rss for r in full) / 2**20:.0f} MB)"
    )
    if full_before:
        print(f"before   peak PSS of the tree {spread([r.pss / 2**20 for r in full_before], 'MB')}")
    if args.per_source:
        per_source(sources_toml, one_core, common, args.repeat, before)
    peer_agsearch(corpus, OUT / "peer-ledger.db", args.repeat)

    # This machine's timings vary from run to run: the no-change figure is the median of five.
    again = [Run([*common, "--config", str(sources_toml)]) for _ in range(5)]
    wall0 = statistics.median(r.wall for r in again)
    print(
        f"rerun    no change           {wall0:8.2f} s     (command, median of 5;"
        f" {again[-1].report['seconds']}s in sync, {again[-1].report['unchanged']:,} units"
        " unchanged)"
    )
    largest = max((p for p in files if p.suffix == ".jsonl"), key=lambda p: p.stat().st_size)
    lines = largest.read_bytes().splitlines(keepends=True)
    with largest.open("ab") as f:
        f.writelines(line if line.endswith(b"\n") else line + b"\n" for line in lines[-10:])
    appended = Run([*common, "--config", str(sources_toml)])
    print(
        f"rerun    10 lines appended   {appended.wall:8.2f} s     (command;"
        f" {appended.report['seconds']}s in sync, {appended.report['bytesRead']:,} bytes read)"
        f" = no-change + {appended.wall - wall0:.2f}s"
    )
    os.truncate(largest, sum(len(x) for x in lines))  # leave the corpus as built


if __name__ == "__main__":
    main()
