"""The usage rollup the SQLite writer keeps (`store/sqlite/usage_slots.py`) holds what summing the
turns gives, whatever was imported, imported again with other turns, models and times, or
deleted; a ledger of an older schema gets it summed by its migration; and a usage report read
from it is the report read from the turns."""

from __future__ import annotations

import copy
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.store.factory import T0, batch, item
from tracehouse.model import ids
from tracehouse.model.turn_time import MODEL, ROLLUP, ROLLUP_SUMS, WHEN, quarter_hour
from tracehouse.reports import usage as usage_report
from tracehouse.reports.filters import SessionFilters
from tracehouse.store.sqlite import usage_slots
from tracehouse.store.sqlite.migrations import known_migrations
from tracehouse.store.sqlite.store import SqliteStore

HOUR = 3_600_000
CLI = [sys.executable, "-m", "tracehouse.cli.app"]

TURN = st.fixed_dictionaries(
    {
        "at": st.one_of(st.none(), st.integers(0, 48 * 4 - 1).map(lambda q: T0 + q * HOUR // 4
                                                                 + 7 * 60_000)),
        "model": st.sampled_from([None, "claude-opus-4-1", "gpt-5"]),
        "input": st.one_of(st.none(), st.integers(0, 10_000)),
        "output": st.integers(0, 2_000),
        "cached": st.integers(0, 5_000),
    }
)  # fmt: skip
SESSION = st.fixed_dictionaries(
    {
        "sid": st.sampled_from(["s1", "s2", "s3"]),
        "provider": st.sampled_from(["claude-code", "codex"]),
        "model": st.sampled_from([None, "claude-sonnet-4-5"]),
        "created": st.one_of(st.none(), st.integers(0, 47).map(lambda h: T0 + h * HOUR)),
        "subagent": st.booleans(),
        "turns": st.lists(TURN, max_size=4),
    }
)
ACTION = st.one_of(
    st.tuples(st.just("import"), SESSION),
    st.tuples(st.just("delete"), st.sampled_from(["s1", "s2", "s3"]), st.booleans()),
)


ONE = {"sid": "s1", "provider": "codex", "model": "gpt-5", "created": T0, "subagent": False,
       "turns": [{"at": T0, "model": None, "input": 10, "output": 5, "cached": 2}]}  # fmt: skip


def _item(session: dict[str, Any]) -> dict[str, Any]:
    made = item(session["sid"], isSubagent=session["subagent"])
    made["sourceProvider"] = session["provider"]
    made["session"]["model"] = session["model"]
    made["session"]["createdAtMs"] = session["created"]
    made["turns"] = [
        {
            "sourceTurnId": f"t{k}",
            "sequence": k,
            "status": "completed",
            "startedAtMs": turn["at"],
            "model": turn["model"],
            "inputTokens": turn["input"],
            "outputTokens": turn["output"],
            "cachedInputTokens": turn["cached"],
            "queryMessageSourceIds": ["m0"],
        }
        for k, turn in enumerate(session["turns"])
    ]
    return made


def kept(conn: sqlite3.Connection) -> set[tuple[Any, ...]]:
    rows = conn.execute(f"SELECT * FROM {ROLLUP} WHERE turns <> 0").fetchall()
    return set(rows)


def summed(conn: sqlite3.Connection) -> set[tuple[Any, ...]]:
    """The rollup as summing every turn at once gives it."""
    sums = ", ".join(f"coalesce(sum(t.{c}), 0)" for c in ROLLUP_SUMS)
    return set(conn.execute(
        f"SELECT coalesce({quarter_hour(WHEN)}, ''), s.source_provider, coalesce({MODEL}, ''),"
        f" coalesce(s.is_subagent, 0), count(*), {sums} FROM turns t JOIN sessions s"
        " ON s.session_id = t.session_id GROUP BY 1, 2, 3, 4"
    ).fetchall())  # fmt: skip


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(actions=st.lists(ACTION, min_size=1, max_size=8))
def test_the_rollup_is_the_turns_summed_whatever_was_written(tmp_path_factory, actions):
    store = SqliteStore(tmp_path_factory.mktemp("slots") / "ledger.db", create=True)
    try:
        for action in actions:
            if action[0] == "import":
                store.import_batch(batch([_item(copy.deepcopy(action[1]))]))
            else:
                _, sid, codex = action
                provider = "codex" if codex else "claude-code"
                store.delete_sessions([ids.session_id(provider, sid)], "2026-02-01T00:00:00.000Z")
            assert kept(store.conn) == summed(store.conn), action
    finally:
        store.close()


def test_a_ledger_before_the_rollup_gets_it_summed(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    store = SqliteStore(path, create=True)
    store.import_batch(batch([_item(ONE)]))
    store.conn.execute(f"DROP TABLE {ROLLUP}")
    store.conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm025_usage_slots'")
    store.close()
    store = SqliteStore(path)  # the migration runs on open
    try:
        slot = "2026-01-01T00:00:00.000Z"
        assert kept(store.conn) == {(slot, "codex", "gpt-5", 0, 1, 10, 5, 2, 0, 0)}
        assert known_migrations().index("m025_usage_slots") + 1 == usage_slots.SINCE_SCHEMA
    finally:
        store.close()


def test_a_report_read_from_the_rollup_is_the_one_read_from_the_turns(
    tmp_path: Path, monkeypatch
) -> None:
    store = SqliteStore(tmp_path / "ledger.db", create=True)
    sessions = [
        {"sid": "s1", "provider": "codex", "model": "gpt-5", "created": T0, "subagent": False,
         "turns": [{"at": T0 + 20 * HOUR + 7, "model": None, "input": 100, "output": 5,
                    "cached": 20},
                   {"at": None, "model": "gpt-5-mini", "input": 7, "output": 1, "cached": 0}]},
        {"sid": "s2", "provider": "claude-code", "model": None, "created": None,
         "subagent": True,
         "turns": [{"at": T0 + 47 * HOUR, "model": "claude-opus-4-1", "input": 50,
                    "output": 9, "cached": 40},
                   {"at": None, "model": None, "input": 3, "output": 3, "cached": 0}]},
    ]  # fmt: skip
    store.import_batch(batch([_item(s) for s in sessions]))
    prices = _Prices()
    windows = [SessionFilters(), SessionFilters(providers=("codex",)),
               SessionFilters(models=("claude",)), SessionFilters(subagents=False),
               SessionFilters(since="2026-01-01T12:00:00.000Z"),
               SessionFilters(until="2026-01-02T00:00:00.000Z")]  # fmt: skip
    try:
        for period in usage_report.ROLLED:
            for filters in windows:
                assert usage_report._rolled(store, filters)
                rolled = usage_report.usage(store, period, filters, prices).to_json()
                with monkeypatch.context() as patch:
                    patch.setattr(usage_report, "_rolled", lambda *_: False)
                    direct = usage_report.usage(store, period, filters, prices).to_json()
                assert rolled == direct, (period, filters)
                assert rolled["rows"] or filters.models  # the report is not empty
    finally:
        store.close()
    assert not usage_report._rolled(store, SessionFilters(since="2026-01-01T12:07:00.000Z"))
    assert not usage_report._rolled(store, SessionFilters(project="shop"))


class _Prices:
    """A price per model and UTC day, so that a sum priced on another day would show."""

    source = "test"

    def cost(self, model: str | None, tokens: Any, at: str | None) -> float | None:
        if model is None or at is None:
            return None
        return tokens.total * (1 + int(at[8:10])) / 1000


def test_store_verify_finds_a_rollup_changed_by_hand_and_rebuild_usage_sums_it_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    store = SqliteStore(path, create=True)
    store.import_batch(batch([_item(ONE)]))
    store.conn.execute(f"UPDATE {ROLLUP} SET input_tokens = input_tokens + 1")
    store.close()
    env = {**os.environ, "TRACEHOUSE_EMBEDDINGS": "none"}
    store_flag = ["--store", str(path)]
    checked = subprocess.run([*CLI, "store", "verify", *store_flag], capture_output=True,
                             text=True, env=env)  # fmt: skip
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "usage rollup = sum of turns" in checked.stdout
    assert "store rebuild-usage" in checked.stdout
    rebuilt = subprocess.run([*CLI, "store", "rebuild-usage", *store_flag], capture_output=True,
                             text=True, env=env, check=True)  # fmt: skip
    assert "summed again from the turns (1 rows)" in rebuilt.stdout
    verified = subprocess.run([*CLI, "store", "verify", *store_flag], capture_output=True,
                              text=True, env=env)  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
