"""Hostile input against the whole pipeline: a mutated real line or database value per trial.

    uv run python bench/fuzz_bench.py [--trials 2000] [--seed 1] [--corpus ../shared/fixtures]

Each trial copies one source of one fixture home (all six sources), mutates one line of one
transcript or document (a NaN, an integer past int64, 300 or 1,100 levels of nesting, invalid
UTF-8, a lone surrogate, a 2 MiB string, a dropped key, a truncated or duplicated line…), one chat
value of a Cursor database or one value of an OpenCode or Cursor agent database, backfills it
into a fresh SQLite ledger and checks what DESIGN promises of bad input:

  crashes           exceptions out of `sync` (each is a traceback a user would see)
  hangs             trials that took more than 60 s
  unlocated         rejects whose location names neither a line nor a key
  lost              sessions of other files whose rows differ from a clean backfill

Target (issue #13): ≥ 2,000 trials with 0 crashes, 0 hangs, 0 unlocated, 0 lost.
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
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    parser.add_argument("--show", type=int, default=5, help="failures to print in full")
    args = parser.parse_args()
    homes = sorted(p for p in (args.corpus / "homes").iterdir() if p.is_dir())
    pool = [(home, provider, path) for home in homes for provider, path in targets(home)]
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
            tally["rejects"] += outcome.rejects
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
    for key in ("crashes", "hangs", "unlocated", "lost"):
        print(f"{key:<11} {tally[key]}")
    print(f"rejects     {tally['rejects']} written, each naming its file and line or key")
    for home_name, outcome in failures[: args.show]:
        print(f"\n--- {home_name}: {outcome.target} — {outcome.mutation}")
        print(outcome.crash or outcome.unlocated or outcome.lost)
    clean = not any(tally[k] for k in ("crashes", "hangs", "unlocated", "lost"))
    ok = clean and tally["tried"] >= 2000
    print("\ntarget: ≥ 2000 trials, 0 crashes/hangs/unlocated/lost —", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
