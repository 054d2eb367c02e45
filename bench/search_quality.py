"""Search by meaning: how well each mode finds what a person asks for, on the fixture corpus.

    uv run python bench/search_quality.py [--model wordllama] [--model model2vec:DIR]
                                          [--model openai:MODEL@URL] [--pg DSN] [--show]

Backfills the fixture corpus (TRACEHOUSE_CORPUS, default ../shared/fixtures) into a fresh
SQLite ledger once, then for each model: embeds it (`index embeddings --model`), and runs every
query of the relevance set (tests/data/search/relevance.tsv: paraphrases, exact words,
cross-lingual) in each mode. Prints recall@10 and nDCG@10 per mode and kind, the seconds the
embedding took, and the targets: hybrid ≥ lexical + 20 points of recall@10 on paraphrases, and
no worse than lexical by more than 2 points on exact words.

A query's hits are ranked sessions: each hit stands for the session it is in (a subagent's for
its parent's), the first time that session appears. With --pg the same ledger is copied to
PostgreSQL and each semantic query's top sessions are compared with SQLite's.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from backfill_bench import OUT, build_corpus  # noqa: E402

from tracehouse.config import parse_model  # noqa: E402
from tracehouse.search import embedders  # noqa: E402
from tracehouse.search.hits import SearchFilters  # noqa: E402
from tracehouse.store import open_store  # noqa: E402

RELEVANCE = ROOT / "tests" / "data" / "search" / "relevance.tsv"
MODES = ("lexical", "semantic", "hybrid")
KINDS = ("paraphrase", "exact", "crosslingual")
DEPTH = 10


@dataclass(frozen=True)
class Judged:
    kind: str
    query: str
    relevant: frozenset[str]


def relevance_set(path: Path = RELEVANCE) -> list[Judged]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        kind, query, relevant, _why = line.split("\t")
        if kind not in KINDS:
            raise SystemExit(f"{path}:{n}: unknown kind {kind!r}")
        out.append(Judged(kind, query, frozenset(relevant.split())))
    return out


def roots_of(store) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Each session's id → the label of the session at the root of its family."""
    rows = store.query("SELECT session_id, parent_session_id, label FROM sessions")
    parent = {r["session_id"]: r["parent_session_id"] for r in rows}
    label = {r["session_id"]: r["label"] for r in rows}
    out = {}
    for sid in parent:
        top, seen = sid, set()
        while parent.get(top) and parent[top] in label and top not in seen:
            seen.add(top)
            top = parent[top]
        out[sid] = label[top]
    return out


def ranked_sessions(hits, roots: dict[str, str]) -> list[str]:  # type: ignore[no-untyped-def]
    out: list[str] = []
    for hit in hits:
        root = roots.get(hit.session_id, hit.label)
        if root not in out:
            out.append(root)
    return out[:DEPTH]


def recall(found: list[str], relevant: frozenset[str]) -> float:
    return len(set(found) & relevant) / len(relevant)


def ndcg(found: list[str], relevant: frozenset[str]) -> float:
    gain = sum(1 / math.log2(i + 2) for i, s in enumerate(found) if s in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), DEPTH)))
    return gain / ideal


def ledger(fixtures: Path) -> Path:
    corpus = build_corpus(fixtures, 1)
    path = OUT / "quality.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    env = {**os.environ, "TRACEHOUSE_EMBEDDINGS": "none"}
    subprocess.run(
        [sys.executable, "-m", "tracehouse.cli.app", "sync", "backfill", "-q",
         "--config", str(corpus / "sources.toml"), "--store", str(path)],
        check=True, env=env,
    )  # fmt: skip
    return path


def evaluate(store, judged: list[Judged], model: str | None, show: bool):  # type: ignore[no-untyped-def]
    lazy = embedders.Lazy(model) if model else None
    embedder = lazy.model() if lazy else None
    roots = roots_of(store)
    known = set(roots.values())
    for item in judged:
        missing = item.relevant - known
        if missing:
            raise SystemExit(f"{item.query!r}: no session {', '.join(sorted(missing))} here")
    scores: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    latency: dict[str, list[float]] = defaultdict(list)
    for item in judged:
        for mode in MODES if embedder else ("lexical",):
            began = time.perf_counter()
            try:
                hits = store.search(
                    item.query, SearchFilters(limit=50), mode=mode, embedder=embedder
                )
            except Exception as error:  # a query lexical search cannot parse counts as none
                hits = []
                if mode != "lexical":
                    raise
                _ = error
            latency[mode].append(time.perf_counter() - began)
            found = ranked_sessions(hits, roots)
            scores[(mode, item.kind)].append(
                (recall(found, item.relevant), ndcg(found, item.relevant))
            )
            if show and mode == "hybrid":
                mark = "ok " if set(found[:3]) & item.relevant else "-- "
                print(f"  {mark}{item.kind[:5]} {item.query[:60]:<60} {' '.join(found[:3])}")
    return scores, latency


def table(name: str, scores, latency) -> None:  # type: ignore[no-untyped-def]
    print(f"\n{name}")
    print(
        f"  {'mode':<9}"
        + "".join(f"{k + ' R@10':>18}{'nDCG':>7}" for k in KINDS)
        + f"{'p50 ms':>9}"
    )
    for mode in MODES:
        if (mode, KINDS[0]) not in scores:
            continue
        cells = ""
        for kind in KINDS:
            got = scores[(mode, kind)]
            r = 100 * sum(x for x, _ in got) / len(got)
            n = 100 * sum(y for _, y in got) / len(got)
            cells += f"{r:>18.1f}{n:>7.1f}"
        p50 = sorted(latency[mode])[len(latency[mode]) // 2] * 1000
        print(f"  {mode:<9}{cells}{p50:>9.1f}")


def mean_recall(scores, mode: str, kind: str) -> float:  # type: ignore[no-untyped-def]
    got = scores[(mode, kind)]
    return 100 * sum(x for x, _ in got) / len(got)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="a model setting (repeatable)")
    parser.add_argument("--pg", help="also on this PostgreSQL database (emptied first)")
    parser.add_argument("--show", action="store_true", help="each query's top hybrid sessions")
    args = parser.parse_args()
    fixtures = Path(os.environ.get("TRACEHOUSE_CORPUS", ROOT.parent / "shared" / "fixtures"))
    judged = relevance_set()
    counts = {k: sum(1 for j in judged if j.kind == k) for k in KINDS}
    print(
        f"relevance set: {len(judged)} queries ({', '.join(f'{n} {k}' for k, n in counts.items())})"
    )
    path = ledger(fixtures)
    print(f"ledger: {path} ({path.stat().st_size / 1e6:.0f} MB)")
    for model in args.model or ["wordllama"]:
        name = parse_model(model).name
        store = open_store(path)
        try:
            began = time.perf_counter()
            done = store.embed_backlog(embedders.load(parse_model(model)), again=True)
            took = time.perf_counter() - began
            status = store.embedding_status()
            print(f"\n{name}: {done:,} rows embedded in {took:.1f} s"
                  f" ({status.vectors:,} vectors of {status.dims})")  # fmt: skip
            scores, latency = evaluate(store, judged, model, args.show)
        finally:
            store.close()
        table(name, scores, latency)
        gain = mean_recall(scores, "hybrid", "paraphrase") - mean_recall(
            scores, "lexical", "paraphrase"
        )
        loss = mean_recall(scores, "lexical", "exact") - mean_recall(scores, "hybrid", "exact")
        print(f"  paraphrases: hybrid − lexical = {gain:+.1f} points of recall@10 (target ≥ +20)")
        print(f"  exact words: lexical − hybrid = {loss:+.1f} points (target ≤ 2)")
        if args.pg:
            compare_postgres(path, args.pg, model, judged)


def compare_postgres(path: Path, dsn: str, model: str, judged: list[Judged]) -> None:
    """The same ledger on PostgreSQL: each semantic query's top sessions against SQLite's."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
    subprocess.run(
        [sys.executable, "-m", "tracehouse.cli.app", "store", "copy", "--from", str(path),
         "--to", dsn, "-q"],
        check=True, env={**os.environ, "TRACEHOUSE_EMBEDDINGS": "none"},
    )  # fmt: skip
    embedder = embedders.load(parse_model(model))
    lite, pg = open_store(path), open_store(dsn)
    try:
        pg.embed_backlog(embedder)
        same = 0
        roots_lite, roots_pg = roots_of(lite), roots_of(pg)
        for item in judged:
            a = ranked_sessions(lite.search(item.query, SearchFilters(limit=50), mode="semantic",
                                            embedder=embedder), roots_lite)  # fmt: skip
            b = ranked_sessions(pg.search(item.query, SearchFilters(limit=50), mode="semantic",
                                          embedder=embedder), roots_pg)  # fmt: skip
            same += a[:5] == b[:5]
        print(
            f"  PostgreSQL: the same top 5 sessions as SQLite for {same} of {len(judged)} queries"
        )
    finally:
        lite.close()
        pg.close()


if __name__ == "__main__":
    main()
