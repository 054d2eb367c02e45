"""`copy_store`: a ledger moved between stores through `import_batch`, in either direction,
idempotent, resumable after an interruption, with provenance carried over."""

from __future__ import annotations

import copy

import pytest

from tests.store.factory import CONTENT, batch, item, snapshot
from tracehouse.model.contract import Reject, WatermarkUpdate
from tracehouse.store import open_store
from tracehouse.store.protocol import BOOKKEEPING
from tracehouse.upkeep.copy import copy_store

EVERYTHING = (*CONTENT, *BOOKKEEPING)


class Interrupted(Exception):
    pass


@pytest.fixture
def stores(tmp_path, pg_schemas):
    """One SQLite and one PostgreSQL store, each way round."""
    made = []

    def make(kind: str):
        store = open_store(pg_schemas() if kind == "postgresql" else tmp_path / f"{len(made)}.db")
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


def filled(store):
    pool = [item(f"s{i}", 2 + i % 3) for i in range(7)]
    first = batch([copy.deepcopy(i) for i in pool[:4]])
    first = type(first)(
        first.items,
        frames=first.frames,
        run_id="run-one",
        mode="backfill",
        watermarks=(WatermarkUpdate("claude-code", "/h/a.jsonl", {"offset": 10}, {"n": 1}),),
        rejects=(Reject("claude-code", "/h/a.jsonl", "line 3", "not JSON", "{oops"),),
    )
    store.import_batch(first)
    store.import_batch(batch([copy.deepcopy(i) for i in pool[4:]], idempotencyKey="k-1"))
    store.mark_missing("claude-code", ["/h/a.jsonl"], "2026-02-02T00:00:00.000Z", "run-one")
    return store


@pytest.mark.parametrize(
    ("source_kind", "target_kind"), [("sqlite", "postgresql"), ("postgresql", "sqlite")]
)
def test_a_copy_holds_every_row_of_the_source(stores, source_kind, target_kind):
    source, target = filled(stores(source_kind)), stores(target_kind)
    report = copy_store(source, target)
    assert report.ok and report.copied == report.sessions == 7
    expected = snapshot(source, EVERYTHING)
    got = snapshot(target, EVERYTHING)
    this_run = [r for r in got["import_runs"] if r["run_id"] == report.run_id]
    assert [r["mode"] for r in this_run] == ["migration"]
    got["import_runs"].remove(this_run[0])
    assert got == expected  # provenance, cursors, rejects and idempotency keys included

    again = copy_store(source, target)
    assert (again.copied, again.unchanged, again.rows_written) == (0, 7, 0)
    assert again.watermarks == again.log_rows == 0


def test_an_interrupted_copy_resumes_where_it_stopped(stores):
    source, target = filled(stores("sqlite")), stores("postgresql")

    def stop_after_two(done: int, total: int) -> None:
        if done == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        copy_store(source, target, batch_sessions=1, progress=stop_after_two)
    assert target.info().row_counts["sessions"] == 2
    assert target.info().row_counts["watermarks"] == 0  # cursors come only after every session
    resumed = copy_store(source, target, batch_sessions=1)
    assert (resumed.copied, resumed.unchanged) == (5, 2)
    assert snapshot(target) == snapshot(source)


def test_a_copy_into_a_ledger_with_sessions_of_its_own_keeps_them(stores):
    source, target = filled(stores("postgresql")), stores("sqlite")
    target.import_batch(batch([item("theirs", 3)]))
    copy_store(source, target)
    assert target.info().row_counts["sessions"] == 8
