"""The ledger is a function of the logs it read, whatever the worker count, batch size or order
(issue #72): the backfill bench's corpus at two copies (the copies share their timestamps, as a
restored backup or a synced second home would, so rules that choose among candidates meet
ties) synced with 1, 2 and 4 workers, three batch sizes and a shuffled unit order gives equal
rows, run provenance aside. Cursors are compared apart: their resume states say where a read
stopped and are no part of the ledger's identity (`store verify` says so)."""

from __future__ import annotations

import random
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.corpus import build
from tests.store.factory import WHEN
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline.options import SyncOptions, Targets
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store

pytestmark = [pytest.mark.corpus, pytest.mark.slow]
TABLES = ("sessions", "turns", "messages", "tool_calls", "message_sources", "threads",
          "session_aliases")  # fmt: skip
PROVENANCE = {*WHEN, "created_at"}  # an alias's row says when a run made it


def _ledger(path: Path) -> dict[str, list[str]]:
    store = open_store(str(path), create=False)
    try:
        out = {}
        for table in TABLES:
            drop = PROVENANCE if table == "session_aliases" else WHEN
            out[table] = sorted(
                repr(sorted((k, v) for k, v in row.items() if k not in drop))
                for row in store.rows(table)
            )
        out["cursors"] = sorted(
            repr((r["source_provider"], r["unit_key"])) for r in store.rows("watermarks")
        )
        return out
    finally:
        store.close()


def _run(path: Path, options: SyncOptions, targets: Targets | None = None) -> dict[str, Any]:
    store = open_store(str(path))
    try:
        report = sync(store, options, targets=targets)
        assert report.ok, report
    finally:
        store.close()
    return _ledger(path)


def test_workers_batch_sizes_and_order_give_the_same_ledger(corpus: Path, tmp_path: Path) -> None:
    target = build(corpus, 2, tmp_path / "corpus")
    config = tomllib.loads((target / "sources.toml").read_text())["sources"]
    sources = {provider: [Path(p) for p in roots] for provider, roots in config.items()}
    base = SyncOptions(sources=sources, pool_min_bytes=0)
    runs = {
        "1 worker, 8 MiB batches": replace(base, workers=1),
        "2 workers, 64 KiB batches": replace(base, workers=2, batch_bytes=64 * 1024),
        "4 workers, 1 MiB batches": replace(base, workers=4, batch_bytes=1024 * 1024),
    }
    ledgers = {name: _run(tmp_path / f"{i}.db", options)
               for i, (name, options) in enumerate(runs.items())}  # fmt: skip
    rng = random.Random(72)
    shuffled = {p: rng.sample(PARSERS[p].discover(r), len(PARSERS[p].discover(r)))
                for p, r in sources.items()}  # fmt: skip
    ledgers["shuffled units, 256 KiB batches"] = _run(
        tmp_path / "shuffled.db", replace(base, batch_bytes=256 * 1024), Targets(shuffled)
    )
    (first, want), *others = ledgers.items()
    assert sum(len(rows) for rows in want.values()) > 1000
    for name, got in others:
        for table in (*TABLES, "cursors"):
            missing = sorted(set(want[table]) - set(got[table]))[:3]
            extra = sorted(set(got[table]) - set(want[table]))[:3]
            assert not missing and not extra, (first, name, table, missing, extra)
