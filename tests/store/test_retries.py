"""Retries wait with backoff, count their reasons, and show up in `tracehouse runs`."""

from __future__ import annotations

import gc
import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.pipeline.helpers import make_home
from tracehouse import retrying
from tracehouse.cli.app import app
from tracehouse.errors import StoreLockedError
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite import store as sqlite_store
from tracehouse.store.sqlite.store import SqliteStore

QUICK = retrying.Backoff(attempts=4, first=0.001, most=0.01)


class Flaky(Exception):
    pass


def test_a_retried_call_counts_its_reasons_and_raises_the_last_error() -> None:
    log, calls = retrying.RetryLog(), []

    def work() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise Flaky("busy")
        return "done"

    reason = lambda exc: "flaky" if isinstance(exc, Flaky) else None  # noqa: E731
    assert retrying.call(work, reason=reason, backoff=QUICK, log=log) == "done"
    assert log.take() == {"flaky": 2} and log.take() == {}

    def always() -> None:
        raise Flaky("still busy")

    with pytest.raises(Flaky, match="still busy"):
        retrying.call(always, reason=reason, backoff=QUICK, log=log)
    assert log.reasons == {"flaky": 3}  # four tries, three waits between them


def test_an_error_waiting_cannot_fix_is_raised_at_once() -> None:
    calls = []

    def work() -> None:
        calls.append(1)
        raise ValueError("bad input")

    with pytest.raises(ValueError):
        retrying.call(work, reason=lambda exc: None, backoff=QUICK)
    assert len(calls) == 1


def test_retrying_forever_ends_when_told_to_stop() -> None:
    stop, calls = threading.Event(), []

    def work() -> None:
        calls.append(1)
        raise Flaky("locked")

    endless = retrying.Backoff(attempts=None, first=5.0, most=30.0)  # the first wait: 5-10 s
    threading.Timer(0.2, stop.set).start()
    began = time.monotonic()
    with pytest.raises(Flaky):
        retrying.call(work, reason=lambda exc: "locked", backoff=endless, until=stop)
    assert time.monotonic() - began < 4.5  # the wait ended when `stop` was set
    assert len(calls) == 2  # the first try, and the one after the wait: then no more


def test_a_backfill_waits_for_a_locked_ledger_and_runs_shows_why(tmp_path: Path) -> None:
    home, path = make_home(tmp_path), tmp_path / "ledger.db"
    SqliteStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock for a moment
    threading.Timer(0.5, holder.execute, ("COMMIT",)).start()

    store = SqliteStore(path, busy_timeout_ms=50)
    try:
        report = sync(store, SyncOptions(sources={"claude-code": [home / ".claude"]}))
    finally:
        store.close()
    assert report.ok and report.statuses["imported"] > 0

    shown = CliRunner().invoke(app, ["runs", "--json", "--store", str(path)])
    (run,) = json.loads(shown.stdout)
    assert run["retries"] >= 1
    assert run["retry_reasons"] == {"database is locked": run["retries"]}
    assert run["seconds"] >= 0.3  # the run's time includes its wait for the lock
    table = CliRunner().invoke(app, ["runs", "--store", str(path)]).stdout
    assert f"retried: database is locked ×{run['retries']}" in table


def test_a_ledger_locked_past_the_budget_is_one_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sqlite_store, "LOCK_BACKOFF", QUICK)
    path = tmp_path / "ledger.db"
    SqliteStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    store = SqliteStore(path, busy_timeout_ms=1)
    try:
        with pytest.raises(StoreLockedError, match="stayed locked by another writer"):
            store.start_run("r1", "backfill")
        assert store.retry_log.reasons == {"database is locked": 3}
    finally:
        store.close()
        holder.execute("ROLLBACK")


def test_a_postgresql_conflict_is_retried_and_its_reason_kept(pg_schemas) -> None:
    """A deadlock rolls the batch back whole; it is run again and the run says why it waited."""
    import psycopg

    from tracehouse.store.postgres.store import PostgresStore
    from tracehouse.store.protocol import RunTotals

    store = PostgresStore(pg_schemas())
    tries = []

    def work(conn):  # type: ignore[no-untyped-def]
        tries.append(1)
        if len(tries) == 1:
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        conn.execute("SELECT 1")

    try:
        store.start_run("run-1", "backfill")
        store._in_transaction(work)
        store.finish_run("run-1", RunTotals())
        (row,) = store.query("SELECT retries, retry_reasons FROM import_runs")
    finally:
        store.close()
    assert len(tries) == 2
    assert row["retries"] == 1 and json.loads(row["retry_reasons"]) == {"deadlock": 1}


def test_a_call_that_succeeds_at_once_builds_no_retry_loop() -> None:
    # A Retrying per call left a reference cycle for the collector at every Cursor read.
    gc.collect()
    gc.disable()
    try:
        for _ in range(10):
            assert retrying.call(lambda: 1, reason=lambda exc: "x", backoff=QUICK) == 1
        assert gc.collect() == 0
    finally:
        gc.enable()
