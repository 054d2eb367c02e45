"""Hostile input against the whole pipeline: one damaged file, line or value per trial.

    uv run python bench/fuzz_bench.py [--trials 5000] [--seed 1] [--corpus ../shared/fixtures]
                                      [--source NAME ...]

Each trial copies one source of one fixture home (every source it holds) and damages one of its
files
(`tests/hostile/trial.py`), drawn from:

  line      one line's value (a NaN, an integer past int64, 300 or 1,100 levels of nesting,
            invalid UTF-8, a lone surrogate, a 2 MiB string…), a dropped key, a truncated or
            duplicated line (`mutations.py`)
  text      a line or document replaced by null or another top-level type, a value inside a
            JSON document, two lines swapped, a parent-id loop, CRLF, a BOM, no final newline,
            a line far over the line limit (`damage.py`)
  cursor    one chat value of a Cursor database, or a row with a key of another type
  database  a value of an OpenCode or Cursor agent database; in any database a cell of another
            type (NULL, INTEGER, REAL, past int64, text for a blob), junk rows, the file
            truncated, emptied or overwritten in places, a garbage -wal or -journal

A quarter of the trials backfill the clean copy first, so that the damaged file is read again
over a ledger that holds it. Then the trial backfills into a SQLite ledger and checks what
DESIGN promises of bad input:

  crashes           exceptions out of `sync` (each is a traceback a user would see)
  hangs             trials that took more than 60 s
  unlocated         rejects whose location names neither a line, an offset nor a key
  lost              sessions of other files whose rows differ from a clean backfill

Target (issue #40): ≥ 5,000 trials with 0 crashes, 0 hangs, 0 unlocated, 0 lost.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.hostile.trial import SOURCES, baseline_of, run_trial, targets  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    parser.add_argument("--show", type=int, default=5, help="failures to print in full")
    parser.add_argument(
        "--source",
        action="append",
        choices=SOURCES,
        default=[],
        help="only this source's files (repeatable; default: all)",
    )
    args = parser.parse_args()
    homes = sorted(p for p in (args.corpus / "homes").iterdir() if p.is_dir())
    pool = [(home, provider, path) for home in homes for provider, path in targets(home)
            if not args.source or provider in args.source]  # fmt: skip
    if not pool:
        print(f"no transcripts or Cursor databases under {args.corpus}/homes")
        return 2
    rng = random.Random(args.seed)
    tally: Counter[str] = Counter()
    failures = []
    baselines: dict[tuple[Path, str], object] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tracehouse-fuzz-") as tmp:
        work = Path(tmp) / "trial"
        for n in range(args.trials):
            home, provider, path = rng.choice(pool)
            if (home, provider) not in baselines:
                baselines[(home, provider)] = baseline_of(home, work, provider)
            outcome = run_trial(home, work, provider, path, rng, baselines[(home, provider)])
            tally["tried"] += 1
            tally[f"tried {provider}"] += 1
            tally[f"family {outcome.family}"] += 1
            tally["reimported"] += outcome.reimported
            tally["rejects"] += outcome.rejects
            tally["coarse"] += outcome.coarse
            bad = [
                k
                for k, v in (
                    ("crashes", outcome.crash),
                    ("hangs", outcome.hang),
                    ("unlocated", outcome.unlocated),
                    ("lost", outcome.lost),
                )
                if v
            ]
            tally.update(bad)
            if bad:
                failures.append((home.name, outcome))
            if (n + 1) % 100 == 0:
                print(f"  {n + 1} trials, {len(failures)} failing", file=sys.stderr)
    seconds = time.perf_counter() - started
    print(f"trials      {tally['tried']}  ({seconds:.0f} s, seed {args.seed})")
    for provider in SOURCES:
        print(f"  {provider:<12} {tally[f'tried {provider}']}")
    print("damage")
    for key in sorted(k for k in tally if k.startswith("family ")):
        print(f"  {key[7:]:<24} {tally[key]}")
    print(f"  read over a ledger that held it clean: {tally['reimported']}")
    for key in ("crashes", "hangs", "unlocated", "lost"):
        print(f"{key:<11} {tally[key]}")
    print(f"rejects     {tally['rejects']} written, each naming its file and line or key;"
          f" {tally['coarse']} of them a whole file, database or document")  # fmt: skip
    for home_name, outcome in failures[: args.show]:
        print(f"\n--- {home_name}: {outcome.target} — {outcome.mutation}")
        print(outcome.crash or outcome.unlocated or outcome.lost)
    clean = not any(tally[k] for k in ("crashes", "hangs", "unlocated", "lost"))
    ok = clean and tally["tried"] >= 5000
    print("\ntarget: ≥ 5000 trials, 0 crashes/hangs/unlocated/lost —", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
