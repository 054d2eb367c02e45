"""The task board the parser processes share, and the writer that parses while it would wait."""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.pipeline.helpers import backfill, make_home, snapshot
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline import sync as sync_module
from tracehouse.pipeline import workers
from tracehouse.pipeline.options import PHASES, SyncOptions, SyncReport
from tracehouse.pipeline.sync import plan
from tracehouse.pipeline.workers import TaskBoard
from tracehouse.store.sqlite.store import SqliteStore

CONTEXT = multiprocessing.get_context("spawn")


SPILL = tempfile.mkdtemp(prefix="tracehouse-test-board-")


def board_of(sizes: list[int]) -> TaskBoard:
    return TaskBoard([(f"unit-{n}", None, size) for n, size in enumerate(sizes)], CONTEXT, SPILL)  # type: ignore[misc]


def _take_all(board: TaskBoard, taken: multiprocessing.Queue) -> None:
    taken.put([t[0] for t in board.front()])


def test_a_worker_reads_the_units_from_the_spill_file_not_from_its_start_up_data(tmp_path):
    tasks = [(f"unit-{n}", None, n) for n in range(5000)]
    board = TaskBoard(tasks, CONTEXT, str(tmp_path))  # type: ignore[arg-type]
    assert board.__getstate__()["_tasks"] is None  # a launch writes no units to the pipe
    assert len(pickle.dumps(tasks)) > 64 * 1024  # they would have filled it
    taken = CONTEXT.Queue()
    worker = CONTEXT.Process(target=_take_all, args=(board, taken))
    worker.start()
    assert taken.get(timeout=60) == [f"unit-{n}" for n in reversed(range(5000))]
    worker.join(timeout=10)
    assert list(board.front()) == []  # the worker took them from the shared board


def test_workers_take_the_largest_first_and_the_writer_the_smallest_that_fit():
    board = board_of([5, 40, 1, 20, 2])
    front = board.front()
    assert next(front)[2] == 40
    assert [t[2] for t in board.back(4)] == [1, 2]  # 5 more would not fit in 4
    assert board.back(4) == []  # the smallest left, 5, does not fit: left to the workers
    assert [t[2] for t in front] == [20, 5]
    assert board.back(100) == []


@given(
    sizes=st.lists(st.integers(0, 50), max_size=30),
    takes=st.lists(st.one_of(st.none(), st.integers(0, 120)), max_size=60),
)
def test_every_unit_is_taken_once_whoever_takes_it(sizes, takes):
    board = board_of(sizes)
    front = board.front()
    taken = []
    for take in takes:  # None: a worker takes one; a number: the writer steals that many bytes
        if take is None:
            taken.extend(t[0] for t in [next(front, None)] if t is not None)
        else:
            stolen = board.back(take)
            assert sum(t[2] for t in stolen) <= take
            taken.extend(t[0] for t in stolen)
    taken.extend(t[0] for t in front)
    assert sorted(taken) == sorted(f"unit-{n}" for n in range(len(sizes)))


class _Running:
    exitcode = None  # a worker still busy: it has sent nothing yet


def _inbox(tmp_path, monkeypatch, most_bytes):
    """An inbox whose one worker sends nothing, over the fixture home's units."""
    monkeypatch.setattr(workers, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(workers, "STEAL_BYTES", most_bytes)
    home = make_home(tmp_path)
    options = SyncOptions(sources={"claude-code": [home / ".claude"]})
    units = PARSERS["claude-code"].discover([home / ".claude"])
    tasks = [(u, c, size or 0) for u, c, size in plan(units, {}, False)]
    board = TaskBoard(tasks, CONTEXT, str(tmp_path))
    report = SyncReport(run_id="r" * 26)
    inbox = workers._Inbox(queue.Queue(), [_Running()], report, lambda n: None, running=1)
    stopping = CONTEXT.Event()
    inbox.steal = lambda: workers._steal(board, options, inbox, stopping)
    return inbox, board, tasks, stopping


def test_the_writer_parses_the_smallest_units_while_no_batch_comes(tmp_path, monkeypatch):
    inbox, board, tasks, _ = _inbox(tmp_path, monkeypatch, most_bytes=10**9)
    ready = inbox.next_ready()
    assert ready is not None and ready.batch is not None
    assert inbox.report.parsed == len(tasks) and ready.bytes_read == sum(t[2] for t in tasks)
    assert list(board.front()) == []  # every unit was taken here
    assert inbox.next_ready() is None  # nothing left to steal: waits for the worker


def test_the_writer_leaves_units_larger_than_a_steal_to_the_workers(tmp_path, monkeypatch):
    inbox, board, tasks, _ = _inbox(tmp_path, monkeypatch, most_bytes=1)
    while inbox.next_ready() is not None:  # an empty file fits
        pass
    empty = sum(1 for t in tasks if t[2] == 0)
    left = list(board.front())
    assert inbox.report.parsed == empty and len(left) == len(tasks) - empty > 0


def test_the_writer_steals_nothing_once_the_run_stops(tmp_path, monkeypatch):
    inbox, _, _, stopping = _inbox(tmp_path, monkeypatch, most_bytes=10**9)
    stopping.set()
    assert inbox.next_ready() is None and inbox.report.parsed == 0


@pytest.mark.parametrize(
    ("asked", "dry_run", "parsers"),
    [(2, False, 1), (5, False, 4), (16, False, sync_module.SQLITE_PARSERS), (6, True, 5)],
)
def test_sqlite_gets_no_more_parsers_than_its_writer_can_use(
    tmp_path, monkeypatch, asked, dry_run, parsers
):
    """Beyond SQLITE_PARSERS, parsers beside SQLite's one writer would only wait for it; a dry
    run, with nothing to write, has them all."""
    started = []
    monkeypatch.setattr(
        workers, "run_in_workers",
        lambda store, options, tasks, n, report, advance: started.append(n),
    )  # fmt: skip
    store = SqliteStore(tmp_path / "ledger.db")
    try:
        backfill(store, make_home(tmp_path), workers=asked, pool_min_bytes=0, dry_run=dry_run)
    finally:
        store.close()
    assert started == [parsers]


def test_a_backfill_reports_where_its_time_went(tmp_path):
    """Every phase a run spends time in is reported, summed over the processes; the writer's
    index and commit apart from its writing."""
    store = SqliteStore(tmp_path / "ledger.db")
    home = make_home(tmp_path, copies=2)
    try:
        report = backfill(store, home, workers=2, pool_min_bytes=0)
        again = backfill(store, home, workers=2, pool_min_bytes=0).to_json()["phases"]
    finally:
        store.close()
    # Nothing to write the second time: no phase of writing, and none below zero (the run's
    # own bookkeeping commits are not an import's).
    assert not {"parse", "write", "index", "commit"} & set(again), again
    assert "plan" in again and all(seconds >= 0 for seconds in again.values()), again
    phases = report.to_json()["phases"]
    assert set(phases) <= set(PHASES)
    for phase in ("plan", "launch", "start", "parse", "write", "index", "commit"):
        assert phase in phases, (phase, phases)  # reported: time was spent (ms rounding aside)
    assert all(seconds >= 0 for seconds in phases.values()), phases


def test_a_first_load_with_index_builders_stores_and_indexes_what_an_inline_run_does(tmp_path):
    """A backfill with parser processes into an empty ledger, its two large search indexes built
    beside the writer (forced here on any number of cores) and adopted at the end."""
    from tests.search.test_index_builders import indexed

    home = make_home(tmp_path, copies=4)
    inline, built = SqliteStore(tmp_path / "inline.db"), SqliteStore(tmp_path / "built.db")
    try:
        backfill(inline, home, workers=1)
        report = backfill(
            built, home, workers=3, pool_min_bytes=0, batch_sessions=3, builders_min_cores=1
        )
        assert report.ok and report.statuses["imported"] == 12
        phases = report.to_json()["phases"]
        assert {"build", "adopt", "index"} <= set(phases), phases
        assert snapshot(built) == snapshot(inline)
        hits = [h.id for h in inline.search("demo")]
        assert hits and [h.id for h in built.search("demo")] == hits
    finally:
        inline.close()
        built.close()
    assert indexed(tmp_path / "built.db", by_key=True) == indexed(
        tmp_path / "inline.db", by_key=True
    )
