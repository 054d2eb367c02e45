"""What compiling the hot path with mypyc saves, measured before it is kept (issue #71).

    uv run python bench/native_bench.py [--copies 4] [--repeat 3] [--corpus ../shared/fixtures]
                                        [--keep DIR] [--diff]

Copies `src/` to a scratch folder and compiles the modules of HOT there with mypyc (the dev
environment's, as black and mypy compile themselves; it needs a C compiler), then prints what
the compile took. The compiled extensions sit beside their sources, which they shadow, so the
copy runs compiled where `PYTHONPATH` names it. Then, interleaved `--repeat` times on the
backfill bench's corpus (`bench/corpus.py`), each side a fresh ledger:

  parse only   `sync backfill --dry-run` of Claude Code and Codex, one worker, no embeddings
  backfill     `sync backfill` of the whole corpus, default settings

each run with the pure sources and with the compiled copy. Printed per side: wall time, the
CPU-seconds of the whole process tree (user + system, workers included) per GB read, and the
tree's peak PSS; then the compiled side's ratios. `--diff` then runs `ledger_diff.py` with the
compiled copy as its other side: the ledger of every fixture and test home must not move.
`--keep DIR` compiles into DIR and keeps it (for the test suite: `PYTHONPATH=DIR/src pytest`).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from backfill_bench import Run, build_corpus  # noqa: E402

# The modules most parsed bytes go through, as far as mypyc 2.4 compiles them to the same
# ledger: Claude Code's and Codex's parsers, the JSONL loop, the row model, fingerprints and ids,
# redaction's bookkeeping, the passages embedded, the writer's apply. Left out, and why:
# - the kit's other modules and the other sources: a class an uncompiled source subclasses
#   (TurnRows, Conversation) may not be native ("interpreted classes cannot inherit from
#   compiled"); compiling every source with them needs `mypyc_attr` from mypy_extensions;
# - `kit/jsonl.py`: its TooLarge subclasses OSError, which a native class cannot;
# - Codex's builder: its turns hold a weak proxy of it, and a native class takes none;
# - Gemini CLI's reader: compiled, its `super().__init__(*args, ...)` hands the kit's compiled
#   `__init__` the tuple itself as the first argument (a TypeError: every chat a reject).
HOT = (
    "tracehouse/parsers/claude_code/*.py",
    "tracehouse/parsers/codex/*.py",
    "tracehouse/parsers/kit/jsonl_unit.py",
    "tracehouse/model/rows.py",
    "tracehouse/model/fingerprint.py",
    "tracehouse/model/ids.py",
    "tracehouse/model/fields.py",
    "tracehouse/model/tokens.py",
    "tracehouse/model/titles.py",
    "tracehouse/redaction/rows.py",
    "tracehouse/redaction/redactor.py",
    "tracehouse/redaction/near.py",
    "tracehouse/search/passages.py",
    "tracehouse/store/sqlite/apply.py",
)
LEFT_OUT = ("__init__.py", "parsers/codex/builder.py")


def compile_copy(into: Path) -> float:
    """`src/` copied into `into`/src and HOT compiled in place; returns the compile's seconds."""
    src = into / "src"
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    modules = sorted({str(p.relative_to(src)) for pattern in HOT for p in src.glob(pattern)})
    modules = [m for m in modules if not m.endswith(LEFT_OUT)]
    mypyc = Path(sys.executable).with_name("mypyc")
    started = time.perf_counter()
    done = subprocess.run([str(mypyc), *modules], cwd=src, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mypyc failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    seconds = time.perf_counter() - started
    built = len([p for p in src.rglob("*.so") if "build" not in p.relative_to(src).parts])
    print(f"compile  {len(modules)} modules with mypyc: {seconds:.0f} s, {built} extensions")
    return seconds


class Measured:
    """One command under PYTHONPATH=`src`: a backfill bench `Run` (wall, peak PSS, report) and
    the CPU-seconds of its whole tree, from the rusage of the children this process reaped."""

    def __init__(self, args: list[str], src: Path) -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.run = Run(args, env={"PYTHONPATH": str(src)})
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        self.bytes = int(self.run.report.get("bytesRead") or 0)  # type: ignore[call-overload]


def _outcome(measured: Measured) -> tuple[int, int, int, str]:
    """What a run read and made: bytes, rows, rejects, sessions."""
    report = measured.run.report
    rejects = report.get("rejects") or []
    return (measured.bytes, int(report.get("rowsWritten") or 0), len(rejects),  # type: ignore[arg-type, call-overload]
            str(report.get("sessions")))  # fmt: skip


def _line(name: str, runs: list[Measured]) -> tuple[float, float]:
    wall = statistics.median(r.run.wall for r in runs)
    per_gb = [r.cpu / (r.bytes / 1e9) for r in runs if r.bytes]
    pss = statistics.median(r.run.pss for r in runs) / 2**20
    cpu = statistics.median(per_gb)
    print(f"  {name:9} wall {wall:6.2f} s ({min(r.run.wall for r in runs):.2f}–"
          f"{max(r.run.wall for r in runs):.2f})  CPU {cpu:6.1f} s/GB ({min(per_gb):.1f}–"
          f"{max(per_gb):.1f})  peak PSS {pss:4.0f} MB")  # fmt: skip
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get(
        "TRACEHOUSE_CORPUS", ROOT.parent / "shared" / "fixtures")))  # fmt: skip
    parser.add_argument("--keep", type=Path, help="compile into this folder and keep it")
    parser.add_argument("--diff", action="store_true", help="ledger_diff against the copy")
    args = parser.parse_args()
    if args.repeat < 1 or args.copies < 1:
        parser.error("--repeat and --copies must be at least 1")
    scratch = Path(tempfile.mkdtemp(prefix="native-"))
    into = args.keep or scratch
    if args.keep and (args.keep / "src").exists():
        parser.error(f"--keep {args.keep}: it already holds a src/")
    try:
        compile_copy(into)
        corpus = build_corpus(args.corpus, args.copies)
        measure(corpus, into / "src", scratch, args.repeat)
        if args.diff:
            diff = [sys.executable, str(HERE / "ledger_diff.py"), "--before", str(into / "src")]
            sys.exit(subprocess.run(diff).returncode)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def measure(corpus: Path, compiled: Path, scratch: Path, repeat: int) -> None:
    sides = {"pure": ROOT / "src", "compiled": compiled}
    one = scratch / "one-worker.toml"
    one.write_text('workers = 1\nembeddings = "none"\n')
    parse_only = ["sync", "backfill", "--dry-run", "--config", str(one), "--json", "-q",
                  "--source", f"claude-code={corpus / '.claude'}",
                  "--source", f"codex={corpus / '.codex'}"]  # fmt: skip
    ledger = scratch / "ledger.db"
    whole = ["sync", "backfill", "--config", str(corpus / "sources.toml"), "--json", "-q"]
    runs: dict[tuple[str, str], list[Measured]] = {}
    for _ in range(repeat):
        for side, src in sides.items():
            runs.setdefault(("parse", side), []).append(
                Measured([*parse_only, "--store", str(scratch / "unused.db")], src)
            )
            for suffix in ("", "-wal", "-shm"):
                Path(f"{ledger}{suffix}").unlink(missing_ok=True)
            runs.setdefault(("backfill", side), []).append(
                Measured([*whole, "--store", str(ledger)], src))  # fmt: skip
    for (phase, side), measured in runs.items():  # a faster side that read less proves nothing
        said = {_outcome(m) for m in measured} | {_outcome(m) for m in runs[(phase, "pure")]}
        if len(said) > 1:
            raise SystemExit(f"{phase}: the {side} side did other work: {sorted(said)}")
    for phase, what in (("parse", "parse only, Claude Code + Codex, 1 worker"),
                        ("backfill", "backfill, whole corpus, default settings")):  # fmt: skip
        print(f"{what} (medians of {repeat}, interleaved):")
        pure_wall, pure_cpu = _line("pure", runs[(phase, "pure")])
        wall, cpu = _line("compiled", runs[(phase, "compiled")])
        print(f"  compiled: {pure_wall / wall:.2f}x the speed, {cpu / pure_cpu:.2f}x the CPU/GB")


if __name__ == "__main__":
    main()
