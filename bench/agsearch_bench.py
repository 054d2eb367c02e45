"""tracehouse beside agsearch on one home of Claude Code and Codex logs (issue #71's table).

    uv run python bench/agsearch_bench.py [--copies 24] [--repeat 3] [--corpus ../shared/fixtures]

agsearch comes from PyPI (`uv tool install agsearch`) and must be on PATH. The home is the
backfill bench's corpus (`bench/corpus.py`, `--copies` copies of every fixture): its `.claude`
and `.codex`, which is all of it agsearch reads. Interleaved `--repeat` times, the page cache
warmed first:

  floor        `orjson.loads` of every line of the two sources' files, in this process
  tracehouse   `sync backfill` of the two sources into a new ledger (default settings: secrets
               redacted, searched by words and by meaning), then the same with nothing new
  agsearch     `agsearch -n` with a new cache (it indexes every session first), then the same
               with nothing new

Each first run starts from nothing of its own (a new ledger, a new cache) over the same home.
Printed: the medians and ranges of each, the peak PSS of each tool's whole process tree and
the CPU seconds per GB it spent (user and system, summed over its processes: GNU time), and
tracehouse's speed and memory as ratios of agsearch's. Issue #71's targets: at least 1.0x its
speed at at most 1/3 of its memory; a run with nothing new at most 0.3 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from backfill_bench import Run, bare_parse, build_corpus, files_of, raw_read  # noqa: E402

WORDS = "no-such-words-anywhere"  # a search of nothing: agsearch's time is its index


def rounds(corpus: Path, agsearch: str, repeat: int) -> dict[str, list[Run | float]]:
    files = files_of(corpus / ".claude") + files_of(corpus / ".codex")
    raw_read(files)  # the page cache warm for everyone
    sources = ["--source", f"claude-code={corpus / '.claude'}",
               "--source", f"codex={corpus / '.codex'}"]  # fmt: skip
    found: dict[str, list[Run | float]] = {}
    with tempfile.TemporaryDirectory(prefix="agsearch-bench-") as scratch:
        # Neither tool reads this user's settings, and each keeps its state in the scratch.
        ours = {"XDG_CONFIG_HOME": scratch, "XDG_STATE_HOME": scratch}
        for index in range(repeat):
            found.setdefault("floor", []).append(bare_parse(files))
            ledger = Path(scratch) / f"ledger-{index}.db"
            command = ["sync", "backfill", *sources, "--store", str(ledger), "--json", "-q"]
            found.setdefault("tracehouse", []).append(Run(command, env=ours))
            found.setdefault("tracehouse again", []).append(Run(command, env=ours))
            cache = Path(scratch) / f"agsearch-cache-{index}"
            theirs = {"HOME": str(corpus), "XDG_CACHE_HOME": str(cache)}
            found.setdefault("agsearch", []).append(Run([], [agsearch, "-n", WORDS], theirs))
            found.setdefault("agsearch again", []).append(Run([], [agsearch, "-n", WORDS], theirs))
            shutil.rmtree(cache, ignore_errors=True)
            for suffix in ("", "-wal", "-shm"):
                Path(f"{ledger}{suffix}").unlink(missing_ok=True)
    return found


def _seconds(values: list[Run | float]) -> list[float]:
    return [v.wall if isinstance(v, Run) else v for v in values]


def _pss(values: list[Run | float]) -> float:
    return statistics.median(v.pss for v in values if isinstance(v, Run)) / 2**20


def _cpu(values: list[Run | float], mb: float) -> str:
    """CPU seconds per GB of the home, summed over the tool's processes (GNU time)."""
    spent = [v.cpu * 1000 / mb for v in values if isinstance(v, Run) and v.cpu is not None]
    return f"   {statistics.median(spent):5.1f} CPU-s per GB" if spent else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get(
        "TRACEHOUSE_CORPUS", ROOT.parent / "shared" / "fixtures")))  # fmt: skip
    args = parser.parse_args()
    if args.repeat < 1 or args.copies < 1:
        parser.error("--repeat and --copies must be at least 1")
    agsearch = shutil.which("agsearch")
    if agsearch is None:
        raise SystemExit("agsearch is not on PATH: `uv tool install agsearch` puts it there")
    began = time.perf_counter()
    corpus = build_corpus(args.corpus, args.copies)
    size = sum(p.stat().st_size for p in files_of(corpus / ".claude") + files_of(corpus / ".codex"))
    print(f"home     Claude Code + Codex of {args.copies} copies: {size / 1e6:,.0f} MB"
          f" (ready in {time.perf_counter() - began:.1f} s)")  # fmt: skip
    found = rounds(corpus, agsearch, args.repeat)
    for name, values in found.items():
        seconds = _seconds(values)
        first = name in ("tracehouse", "agsearch")
        memory = f"   peak PSS {_pss(values):5.0f} MB{_cpu(values, size / 1e6)}" if first else ""
        print(f"{name:16} {statistics.median(seconds):6.2f} s (range {min(seconds):.2f}–"
              f"{max(seconds):.2f}){memory}")  # fmt: skip
    ours, theirs = (statistics.median(_seconds(found[n])) for n in ("tracehouse", "agsearch"))
    print(f"tracehouse at {theirs / ours:.2f}x agsearch's speed and"
          f" {_pss(found['tracehouse']) / _pss(found['agsearch']):.2f}x its memory"
          f" (medians of {args.repeat}, interleaved)")  # fmt: skip


if __name__ == "__main__":
    main()
