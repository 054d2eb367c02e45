"""The real corpus through both stores: backfilled into SQLite, copied to PostgreSQL, copied back
to a fresh SQLite file — every row identical — and backfilled straight into PostgreSQL to the
same ledger as into SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipeline.helpers import snapshot as ledger_snapshot
from tests.store.factory import CONTENT, snapshot
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store
from tracehouse.store.protocol import BOOKKEEPING
from tracehouse.upkeep.copy import copy_store

pytestmark = pytest.mark.corpus


def corpus_sources(corpus: Path) -> dict[str, list[Path]]:
    homes = sorted((corpus / "homes").iterdir())
    return {
        "claude-code": [h / ".claude" for h in homes if (h / ".claude" / "projects").is_dir()],
        "codex": [h / ".codex" for h in homes if (h / ".codex").is_dir()],
    }


def test_sqlite_to_postgresql_and_back_keeps_every_row(corpus, tmp_path, pg_schemas):
    original = open_store(tmp_path / "original.db")
    report = sync(original, SyncOptions(sources=corpus_sources(corpus), workers=0))
    assert report.ok
    counts = original.info().row_counts
    assert counts["sessions"] >= 70 and counts["messages"] >= 2000

    team = open_store(pg_schemas())
    there = copy_store(original, team)
    assert there.ok and there.copied == counts["sessions"]
    back = open_store(tmp_path / "back.db")
    assert copy_store(team, back).ok

    tables = (*CONTENT, *BOOKKEEPING)
    expected, got = snapshot(original, tables), snapshot(back, tables)
    copies = {there.run_id} | {r["run_id"] for r in got["import_runs"]} - {
        r["run_id"] for r in expected["import_runs"]
    }
    got["import_runs"] = [r for r in got["import_runs"] if r["run_id"] not in copies]
    assert got == expected
    for store in (original, team, back):
        store.close()


def test_a_backfill_into_postgresql_gives_the_sqlite_ledger(corpus, tmp_path, pg_schemas):
    sqlite_store, pg_store = open_store(tmp_path / "l.db"), open_store(pg_schemas())
    for store in (sqlite_store, pg_store):
        assert sync(store, SyncOptions(sources=corpus_sources(corpus), workers=0)).ok
    assert ledger_snapshot(pg_store) == ledger_snapshot(sqlite_store)
    again = sync(pg_store, SyncOptions(sources=corpus_sources(corpus), workers=0, full=True))
    assert again.rows_written == 0
    sqlite_store.close()
    pg_store.close()
