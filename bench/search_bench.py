"""Search: query latency on the ledger of the backfill corpus, and what the indexes cost.

    uv run python bench/search_bench.py [--copies 24] [--runs 2] [--queries 240] [--pg DSN]

Builds (or reuses) backfill_bench's replicated corpus of every source (about 40 MB a copy;
24 copies ≈ 0.9 GB), then, in one run on this machine:

  backfill     `sync backfill` into a fresh SQLite ledger with the search index, into one
               whose index was dropped before the run (the floor), both without embeddings,
               and with both the index and the embeddings of search by meaning (the default),
               interleaved `--runs` times: medians, ranges and the ratios (targets: the index
               ≤ 1.25× the floor; the embeddings ≤ 1.3× the run without them)
  re-run       the same backfill again: rows written (target 0: the index is not touched)
  size         the index's and the vectors' pages against the ledger's (SQLite dbstat; the
               vectors' target ≤ 25% of the ledger)
  queries      ≥ 200 queries of mixed shapes drawn from the ledger's own text (rare word,
               common word, phrase, identifier, path, prefix, exclusion), half of them with a
               filter; p50 / p95 / max per shape and overall (target p95 ≤ 50 ms on SQLite);
               then in hybrid and semantic mode, with the relevance set's questions as well
               (target: hybrid p95 ≤ 100 ms on SQLite)
  PostgreSQL   with --pg (or TRACEHOUSE_PG_DSN answering): the ledger copied there, and the same
               queries (target p95 ≤ 100 ms)
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from backfill_bench import OUT, Run, build_corpus, files_of  # noqa: E402
from search_quality import relevance_set  # noqa: E402

from tracehouse.search.hits import SearchFilters  # noqa: E402
from tracehouse.search.sqlite_index import INDEXES, MARKS  # noqa: E402
from tracehouse.store import open_store  # noqa: E402

IDENT = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
PATH = re.compile(r"\b[\w.-]+/[\w.-]+\.(?:py|ts|js|md|json|toml|rs|go)\b")
WORD = re.compile(r"\b[a-zA-Z]{4,}\b")
HAN_RUN = re.compile(r"[\u4e00-\u9fa5]{2,}")


def fresh(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def drop_index(path: Path) -> None:
    """A ledger without the search index: the floor the index's cost is measured against."""
    store = open_store(path)
    store.close()
    conn = sqlite3.connect(path)
    for index in INDEXES:  # the writer keeps the indexes that have a mark
        conn.execute(f"DELETE FROM {MARKS} WHERE name = ?", (index.name,))
        conn.execute(f"DROP TABLE {index.name}")
    conn.commit()
    conn.close()


def backfill(corpus: Path, ledger: Path, embeddings: str = "none") -> tuple[float, dict]:  # type: ignore[type-arg]
    config = str(corpus / "sources.toml")
    run = Run(
        ["sync", "backfill", "--config", config, "--store", str(ledger), "--json", "-q"],
        env={"TRACEHOUSE_EMBEDDINGS": embeddings},
    )
    return run.wall, run.report


VECTOR_TABLES = ("embedded", "idx_embedded_key", "embedding_keys", "embedding_blocks",
                 "embedding_marks", "embedding_pending", "embedding_state")  # fmt: skip


def index_size(path: Path) -> tuple[int, int, int]:
    """(bytes of the FTS shadow tables, of the vectors' tables, of the whole file)."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.OperationalError:
        return -1, -1, path.stat().st_size
    finally:
        conn.close()
    fts = sum(size for name, size in rows if name.split("_fts")[0] != name)
    vectors = sum(
        size for name, size in rows if name in VECTOR_TABLES or "autoindex_embedd" in name
    )
    return fts, vectors, sum(size for _name, size in rows)


def make_queries(ledger: Path, n: int, seed: int = 7) -> list[tuple[str, str, SearchFilters]]:
    """(shape, query, filters) drawn from the ledger's own text."""
    rng = random.Random(seed)
    conn = sqlite3.connect(ledger)
    sample = [r[0] for r in conn.execute(
        "SELECT content FROM messages WHERE content IS NOT NULL AND length(content) > 40"
        " ORDER BY rowid LIMIT 20000"
    )]  # fmt: skip
    params = [r[0] for r in conn.execute(
        "SELECT params FROM tool_calls WHERE params IS NOT NULL ORDER BY rowid LIMIT 20000"
    )]  # fmt: skip
    providers = [r[0] for r in conn.execute("SELECT DISTINCT source_provider FROM sessions")]
    han = [r[0] for r in conn.execute(
        "SELECT content FROM messages WHERE content GLOB '*[一-龥][一-龥][一-龥][一-龥]*'"
        " ORDER BY rowid LIMIT 2000"
    )]  # fmt: skip
    conn.close()
    runs = sorted({m for text in han for m in HAN_RUN.findall(text)})
    counts = Counter(w.lower() for text in sample[:5000] for w in WORD.findall(text))
    common = [w for w, _ in counts.most_common(40)]
    rare = [w for w, _ in counts.most_common()[-500:]]  # the least common (a copy repeats all)
    idents = sorted({m for text in sample + params for m in IDENT.findall(text)})[:2000]
    paths = sorted({m for text in sample + params for m in PATH.findall(text)})[:2000]

    def phrase() -> str:
        words = WORD.findall(rng.choice(sample))
        if len(words) < 3:
            return rng.choice(common)
        at = rng.randrange(len(words) - 1)
        return f'"{words[at]} {words[at + 1]}"'

    def unspaced() -> str:
        if not runs:
            return rng.choice(common)
        run = rng.choice(runs)
        size = rng.randint(2, min(4, len(run)))
        at = rng.randrange(len(run) - size + 1)
        return run[at : at + size]

    shapes = {
        "rare word": lambda: rng.choice(rare),
        "common word": lambda: rng.choice(common),
        "phrase": phrase,
        "identifier": lambda: rng.choice(idents or common),
        "path": lambda: rng.choice(paths or common),
        "prefix": lambda: rng.choice(rare or common)[:4] + "*",
        "exclusion": lambda: f"{rng.choice(common)} -{rng.choice(common)}",
        "unspaced": unspaced,  # a word inside a run of Chinese text: a phrase of characters
    }
    out = []
    for i in range(n):
        shape = list(shapes)[i % len(shapes)]
        filters = SearchFilters(limit=20)
        if i % 2:
            choice = rng.randrange(3)
            if choice == 0:
                filters = SearchFilters(providers=(rng.choice(providers),), limit=20)
            elif choice == 1:
                filters = SearchFilters(kinds=("user", "assistant"), limit=20)
            else:
                filters = SearchFilters(since="2026-01-01T00:00:00.000Z", limit=20)
        out.append((shape + (" +filter" if i % 2 else ""), shapes[shape](), filters))
    return out


def latencies(store, queries, mode: str = "lexical", model=None) -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
    by_shape: dict[str, list[float]] = {}
    for shape, text, filters in queries:
        start = time.perf_counter()
        store.search(text, filters, mode=mode, embedder=model)
        by_shape.setdefault(shape.split(" +")[0], []).append(time.perf_counter() - start)
        by_shape.setdefault("all", []).append(time.perf_counter() - start)
    return by_shape


PASSES = 3  # the machine is shared: the query set is run this many times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * q) - 1)]


def report_latency(backend: str, by_shape: dict[str, list[float]]) -> None:
    for shape, values in by_shape.items():
        values = sorted(values)
        p95 = percentile(values, 0.95)
        p50 = statistics.median(values)
        print(
            f"query    {backend:<10} {shape:<12} n={len(values):<4} p50 {p50 * 1000:6.1f} ms"
            f"  p95 {p95 * 1000:6.1f} ms  max {values[-1] * 1000:6.1f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--queries", type=int, default=240)
    parser.add_argument("--pg", default=os.environ.get("TRACEHOUSE_PG_DSN"))
    parser.add_argument(
        "--queries-only", action="store_true", help="reuse the last run's ledger: latency only"
    )
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    args = parser.parse_args()

    corpus = build_corpus(args.corpus, args.copies)
    mb = sum(p.stat().st_size for p in files_of(corpus)) / 1e6
    print(f"corpus: {mb:,.0f} MB in {corpus}")
    with_index, without = OUT / "search-ledger.db", OUT / "search-floor.db"
    embedded = OUT / "search-vectors.db"
    if not (args.queries_only and embedded.exists()):
        measure_backfill(corpus, mb, (with_index, without, embedded), args.runs)
    run_queries(embedded, args.queries, args.pg)


def measure_backfill(corpus: Path, mb: float, ledgers: tuple[Path, Path, Path], runs: int) -> None:
    with_index, without, embedded = ledgers
    times: dict[str, list[float]] = {"with index": [], "without index": [], "with vectors": []}
    for _ in range(runs):  # interleaved: the machine's load changes from run to run
        fresh(without)
        drop_index(without)
        times["without index"].append(backfill(corpus, without)[0])
        fresh(with_index)
        times["with index"].append(backfill(corpus, with_index)[0])
        fresh(embedded)
        times["with vectors"].append(backfill(corpus, embedded, "wordllama")[0])
    for name, values in times.items():
        mid = statistics.median(values)
        print(
            f"backfill {name:<14} median {mid:6.2f} s"
            f"  range {min(values):.2f}-{max(values):.2f} s  ({mb / mid:.0f} MB/s)"
        )
    ratio = statistics.median(times["with index"]) / statistics.median(times["without index"])
    print(f"backfill index cost          {ratio:6.2f}x the floor (target ≤ 1.25x)")
    ratio = statistics.median(times["with vectors"]) / statistics.median(times["with index"])
    print(f"backfill vectors cost        {ratio:6.2f}x the run without (target ≤ 1.3x)")
    for name, ledger, model in (("index", with_index, "none"), ("vectors", embedded, "wordllama")):
        walls = []
        for _ in range(max(3, runs)):
            wall, again = backfill(corpus, ledger, model)
            walls.append(wall)
        spread = f"{min(walls):.2f}-{max(walls):.2f} s"
        print(
            f"re-run   no change ({name:<7}) rows written {again['rowsWritten']} (target 0),"
            f" median {statistics.median(walls):.2f} s, range {spread}"
        )
    fts, vectors, total = index_size(embedded)
    print(
        f"size     index {fts / 2**20:,.0f} MiB and vectors {vectors / 2**20:,.0f} MiB of a"
        f" {total / 2**20:,.0f} MiB ledger (vectors: {vectors / total:.0%} of it, target ≤ 25%)"
    )


def measure_queries(backend: str, store, queries, target_ms: int, mode: str = "lexical",
                    model=None) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    latencies(store, queries[:20], mode, model)  # warm the page cache, as a ledger in use is
    passes = [latencies(store, queries, mode, model) for _ in range(PASSES)]
    for by_shape in passes:
        report_latency(f"{backend}/{mode}"[:10] if mode != "lexical" else backend, by_shape)
    p95s = sorted(percentile(p["all"], 0.95) * 1000 for p in passes)
    print(
        f"query    {backend} {mode}: p95 over {PASSES} passes: median"
        f" {statistics.median(p95s):.1f} ms  range {p95s[0]:.1f}-{p95s[-1]:.1f} ms"
        f" (target ≤ {target_ms} ms)"
    )


def with_questions(queries):  # type: ignore[no-untyped-def]
    """The drawn queries and the relevance set's questions, as people ask by meaning."""
    asked = [("question", j.query, SearchFilters(limit=20)) for j in relevance_set()]
    return list(queries) + asked


def run_queries(ledger: Path, n: int, pg: str | None) -> None:
    from tracehouse.config import parse_model
    from tracehouse.search.embedders import load

    queries = make_queries(ledger, n)
    store = open_store(ledger)
    measure_queries("sqlite", store, queries, target_ms=50)
    model = load(parse_model("wordllama"))
    for mode in ("hybrid", "semantic"):
        measure_queries("sqlite", store, with_questions(queries), 100, mode, model)
    if pg:
        from tracehouse.upkeep.copy import copy_store

        try:
            team = open_store(pg)
        except Exception as exc:  # a bench: report and go on
            print(f"postgres skipped: {exc}")
        else:
            start = time.perf_counter()
            copy_store(store, team)
            print(f"postgres ledger copied in {time.perf_counter() - start:.1f} s")
            (buffers,) = team.query("SHOW shared_buffers")
            print(f"postgres shared_buffers {buffers['shared_buffers']}")
            measure_queries("postgresql", team, queries, target_ms=100)
            team.close()
    store.close()


if __name__ == "__main__":
    main()
