"""`store migrate [--dry-run]` and `store verify` on both stores, on ledgers made to be wrong."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.pipeline.helpers import make_home
from tracehouse.cli.app import app
from tracehouse.store import open_store
from tracehouse.store.sqlite.migrations import known_migrations
from tracehouse.upkeep.copy import copy_store

runner = CliRunner()
LATEST = len(known_migrations())


def cli(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def backfilled(tmp_path: Path) -> Path:
    ledger = tmp_path / "ledger.db"
    home = make_home(tmp_path, copies=2)
    assert cli("sync", "backfill", "--home", home, "--store", ledger, "-q").exit_code == 0
    return ledger


def as_of_schema_4(ledger: Path) -> None:
    """The ledger as the release before run telemetry left it."""
    conn = sqlite3.connect(ledger)
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm005_run_telemetry'")
    conn.execute("ALTER TABLE import_runs DROP COLUMN retry_reasons")
    conn.execute("ALTER TABLE import_runs DROP COLUMN tail_lag_p50_ms")
    conn.commit()
    conn.close()


def columns(ledger: Path) -> set[str]:
    conn = sqlite3.connect(ledger)
    try:
        return {row[1] for row in conn.execute("PRAGMA table_info(import_runs)")}
    finally:
        conn.close()


def test_migrate_lists_then_applies_what_is_pending(tmp_path: Path) -> None:
    ledger = backfilled(tmp_path)
    as_of_schema_4(ledger)

    dry = json.loads(cli("store", "migrate", "--dry-run", "--json", "--store", ledger).stdout)
    assert dry["migrations"] == ["m005_run_telemetry"]
    assert dry["schemaVersion"] == {"from": LATEST - 1, "to": LATEST - 1}
    assert "retry_reasons" not in columns(ledger)  # a dry run changes nothing

    done = cli("store", "migrate", "--store", ledger)
    assert done.exit_code == 0
    assert "applied:\n  m005_run_telemetry" in done.stdout and f"version {LATEST}" in done.stdout
    assert {"retry_reasons", "tail_lag_p50_ms"} <= columns(ledger)
    assert "up to date" in cli("store", "migrate", "--store", ledger).stdout


def test_migrate_refuses_a_ledger_of_a_newer_tracehouse_and_a_missing_one(tmp_path: Path) -> None:
    ledger = backfilled(tmp_path)
    conn = sqlite3.connect(ledger)
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at)"
        " VALUES ('tracehouse', 'm999_future', '2027-01-01')"
    )
    conn.commit()
    conn.close()
    newer = cli("store", "migrate", "--dry-run", "--store", ledger)
    assert newer.exit_code == 2 and "written by a newer tracehouse" in newer.stderr
    missing = cli("store", "migrate", "--store", tmp_path / "nowhere.db")
    assert missing.exit_code == 2 and "no ledger here" in missing.stderr
    assert not (tmp_path / "nowhere.db").exists()


def test_migrate_on_postgresql(pg_schemas) -> None:
    dsn = pg_schemas()
    open_store(dsn).close()
    store = open_store(dsn)
    store.query("DELETE FROM tracehouse_migrations WHERE version = 5")
    store.query("ALTER TABLE import_runs DROP COLUMN retry_reasons")
    store.close()

    dry = json.loads(cli("store", "migrate", "--dry-run", "--json", "--store", dsn).stdout)
    assert dry["migrations"] == ["0005_run_telemetry"]
    assert cli("store", "migrate", "--store", dsn).exit_code == 0
    store = open_store(dsn, migrate=False)
    try:
        assert store.pending_migrations() == []
        assert store.query("SELECT retry_reasons FROM import_runs") == []
    finally:
        store.close()


def test_verify_passes_a_sound_ledger_and_names_each_fault(tmp_path: Path) -> None:
    ledger = backfilled(tmp_path)
    ok = cli("store", "verify", "--store", ledger)
    assert ok.exit_code == 0, ok.output
    assert "ledger verified: no faults" in ok.stdout

    conn = sqlite3.connect(ledger)
    (message,) = conn.execute("SELECT message_id FROM messages ORDER BY message_id").fetchone()
    conn.execute("UPDATE messages SET content = 'edited behind its back' WHERE message_id = ?",
                 (message,))  # fmt: skip
    (session,) = conn.execute("SELECT min(session_id) FROM turns").fetchone()
    conn.execute("UPDATE sessions SET total_tokens = total_tokens + 1 WHERE session_id = ?",
                 (session,))  # fmt: skip
    (gone,) = conn.execute(
        "SELECT session_id FROM sessions WHERE session_id <> ? ORDER BY 1", (session,)
    ).fetchone()
    conn.execute("DELETE FROM sessions WHERE session_id = ?", (gone,))
    conn.commit()
    conn.close()

    bad = cli("store", "verify", "--store", ledger, "--json")
    assert bad.exit_code == 1
    found = {c["check"]: c for c in json.loads(bad.stdout)["checks"]}
    assert found["messages fingerprints"]["examples"] == [f"messages {message}"]
    assert found["session token totals = sum of turns"]["problems"] == 1
    assert session in found["session token totals = sum of turns"]["examples"][0]
    assert f"missing session {gone}" in found["rows whose session is gone"]["examples"][0]
    text = cli("store", "verify", "--store", ledger)
    assert "faults found" in text.stdout and "sync backfill --full" in text.stdout


def test_verify_a_sample_and_on_postgresql(tmp_path: Path, pg_schemas) -> None:
    ledger = backfilled(tmp_path)
    sample = json.loads(cli("store", "verify", "--sample", 1, "--json", "--store", ledger).stdout)
    assert sample["ok"] and sample["sessionsChecked"] == 1 and sample["sessions"] > 1
    assert cli("store", "verify", "--sample", 0, "--store", ledger).exit_code == 2

    dsn = pg_schemas()
    source, team = open_store(ledger), open_store(dsn)
    try:
        assert copy_store(source, team).ok
    finally:
        source.close()
        team.close()
    there = json.loads(cli("store", "verify", "--json", "--store", dsn).stdout)
    assert there["ok"], there
    assert there["sessions"] == sample["sessions"]


@pytest.mark.parametrize("args", [("store", "verify"), ("store", "migrate", "--dry-run")])
def test_maintenance_never_creates_a_ledger(tmp_path: Path, args) -> None:
    result = cli(*args, "--store", tmp_path / "none.db")
    assert result.exit_code == 2 and not (tmp_path / "none.db").exists()
