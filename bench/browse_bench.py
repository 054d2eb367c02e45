"""`tracehouse browse` on the bench ledger: how long its first screen takes, what a keystroke of
search as you type costs, how long the largest session takes to open, and the memory it holds.

    uv run python bench/browse_bench.py [--ledger bench/out/search-vectors.db] [--runs 5]

Driven by Textual's pilot in this process (a terminal of 120×40). The first screen is timed
from the app's start to its first list and transcript; a keystroke is a search of the query
typed so far (each prefix of 20 queries drawn from the relevance set and the ledger's words),
as the app runs it once typing rests; the largest session is the one with the most messages.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search_quality import relevance_set  # noqa: E402

from tracehouse.search.embedders import Lazy  # noqa: E402
from tracehouse.store import open_store  # noqa: E402
from tracehouse.tui.browse import Browse, Row  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * q) - 1)]


async def measure(ledger: Path) -> dict[str, list[float]]:
    store = open_store(ledger)
    out: dict[str, list[float]] = {"first screen": [], "keystroke": [], "largest session": []}
    began = time.perf_counter()
    browse = Browse(store, str(ledger), Lazy("wordllama"))
    async with browse.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        out["first screen"].append(time.perf_counter() - began)
        queries = [j.query for j in relevance_set()][:20]
        for query in queries:
            for end in range(3, len(query) + 1, 3):  # a search as each few letters rest
                start = time.perf_counter()
                browse.show_hits(query[:end])
                out["keystroke"].append(time.perf_counter() - start)
        (largest,) = store.query(
            "SELECT session_id, label FROM sessions ORDER BY message_count DESC LIMIT 1"
        )
        for _ in range(3):
            start = time.perf_counter()
            browse.open_row(Row(largest["label"], largest["session_id"]))
            await pilot.pause()
            out["largest session"].append(time.perf_counter() - start)
        await pilot.press("q")
    store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ledger", type=Path, default=HERE / "out" / "search-vectors.db")
    args = parser.parse_args()
    found = asyncio.run(measure(args.ledger))
    for name, values in found.items():
        p50, p95 = statistics.median(values) * 1000, percentile(values, 0.95) * 1000
        print(f"{name:<16} n={len(values):<4} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms"
              f"  max {max(values) * 1000:7.1f} ms")  # fmt: skip
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    anon, file = (int(status[k].split()[0]) / 1024 for k in ("RssAnon", "RssFile"))
    print(
        f"memory           peak RSS {peak:.0f} MB; at the end {anon:.0f} MB of its own"
        f" (target ≤ 200 MB) and {file:.0f} MB of mapped files (the ledger, which search reads"
        " through a memory map: pages the kernel takes back when it needs them)"
    )


if __name__ == "__main__":
    main()
