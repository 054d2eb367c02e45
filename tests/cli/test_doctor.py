"""`tracehouse doctor` on homes and ledgers built to trip each check, one at a time."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.test_store_maintenance import as_of_schema_4
from tests.pipeline.helpers import main_file, make_home
from tracehouse.cli.app import app
from tracehouse.config import Settings
from tracehouse.doctor import Finding, Host, diagnose
from tracehouse.doctor import sources as source_checks
from tracehouse.humanize import DAY
from tracehouse.pipeline.sources import resolve_sources
from tracehouse.state.scratch import PREFIX

runner = CliRunner()


def cli(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


@pytest.fixture
def ledger(tmp_path: Path, home: Path) -> Path:
    path = tmp_path / "ledger.db"
    assert cli("sync", "backfill", "--home", home, "--store", path, "-q").exit_code == 0
    return path


def roots(home: Path) -> dict[str, list[Path]]:
    return resolve_sources(Settings(home=str(home)), home_given=True)


def check(findings: list[Finding], name: str) -> Finding:
    (found,) = [f for f in findings if f.check == name]
    return found


def host(tmp_path: Path, **changes: object) -> Host:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    watches = tmp_path / "max_user_watches"
    if not watches.exists():
        watches.write_text("65536\n")
    return Host(**{"tmp": str(tmp), "inotify_watches_file": str(watches), **changes})  # type: ignore[arg-type]


def test_a_healthy_home_is_all_ok_and_the_screen_says_so(tmp_path, home, ledger) -> None:
    findings = diagnose(str(ledger), roots(home), host(tmp_path))
    assert {f.status for f in findings} == {"ok"}, [f for f in findings if f.status != "ok"]
    shown = cli("doctor", "--home", home, "--store", ledger)
    assert shown.exit_code == 0
    assert "claude-code source: 5 files in" in shown.stdout and "0 fail" in shown.stdout


def test_no_ledger_fails_and_is_not_created(tmp_path, home) -> None:
    missing = tmp_path / "none.db"
    result = cli("doctor", "--home", home, "--store", missing, "--json")
    assert result.exit_code == 1 and not missing.exists()
    (store,) = [c for c in json.loads(result.stdout)["checks"] if c["check"] == "store"]
    assert store["status"] == "fail" and "sync backfill" in store["fix"]


def test_pending_migrations_warn(tmp_path, home, ledger) -> None:
    as_of_schema_4(ledger)
    findings = diagnose(str(ledger), roots(home), host(tmp_path))
    schema = check(findings, "schema")
    assert schema.status == "warn" and "m005_run_telemetry" in schema.detail
    assert "store migrate" in (schema.fix or "")
    assert {f.status for f in findings} == {"ok", "warn"}  # the other checks still run


def test_a_file_changed_an_hour_ago_and_never_imported_warns(tmp_path, home, ledger) -> None:
    path = main_file(home)
    with path.open("ab") as f:
        f.write(b'{"type":"user","uuid":"late","sessionId":"s","message":{"content":"hi"}}\n')
    hour_ago = time.time() - 2 * 3600
    os.utime(path, (hour_ago, hour_ago))
    found = check(diagnose(str(ledger), roots(home), host(tmp_path)), "claude-code imported")
    assert (
        found.status == "warn"
        and "1 of 5 files not in the ledger as they are now (0 never imported, 1 changed since)"
        in found.detail
    )
    assert "2 h ago" in found.detail


def test_claude_retention_shorter_than_the_time_since_the_last_import_fails(
    tmp_path, home, ledger
) -> None:
    (home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 7}')
    later = host(tmp_path, now=time.time() + 10 * DAY)
    found = check(diagnose(str(ledger), roots(home), later), "claude-code retention")
    assert found.status == "fail" and "after 7 days" in found.detail
    assert "10 days ago" in found.detail and "schedule" in (found.fix or "")
    soon = host(tmp_path, now=time.time() + 5 * DAY)
    assert check(diagnose(str(ledger), roots(home), soon), "claude-code retention").status == "warn"


def test_a_bad_cleanup_setting_names_the_file_and_key(tmp_path, home, ledger) -> None:
    settings = home / ".claude" / "settings.json"
    settings.write_text('{"cleanupPeriodDays": "a week"}')
    found = check(diagnose(str(ledger), roots(home), host(tmp_path)), "claude-code retention")
    assert found.status == "warn" and f"{settings}: cleanupPeriodDays 'a week'" in found.detail


def test_never_imported_transcripts_fail_the_retention_check(tmp_path, home) -> None:
    empty = tmp_path / "empty.db"
    assert cli("store", "init", "--store", empty, "-q").exit_code == 0
    found = check(diagnose(str(empty), roots(home), host(tmp_path)), "claude-code retention")
    assert found.status == "fail" and "no successful import yet" in found.detail


def test_too_few_inotify_watches(tmp_path, home, ledger) -> None:
    limit = tmp_path / "max_user_watches"
    limit.write_text("2\n")
    found = check(diagnose(str(ledger), roots(home), host(tmp_path)), "inotify watches")
    assert found.status == "fail" and "of the 2 allowed" in found.detail
    assert "max_user_watches" in (found.fix or "") and "--poll" in (found.fix or "")


def test_no_room_in_tmpdir_for_a_cursor_snapshot(tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    database = home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    database.parent.mkdir(parents=True)
    conn = sqlite3.connect(database)
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("INSERT INTO cursorDiskKV VALUES ('filler', ?)", (b"x" * 100_000,))
    conn.commit()
    conn.close()

    class Full:
        free = 50_000

    monkeypatch.setattr(source_checks.shutil, "disk_usage", lambda path: Full)
    found = check(
        diagnose(str(tmp_path / "l.db"), roots(home), host(tmp_path)), "room for a Cursor snapshot"
    )
    assert found.status == "fail" and "free in" in found.detail and "TMPDIR" in (found.fix or "")


def test_scratch_left_by_a_killed_run_warns(tmp_path, home, ledger) -> None:
    machine = host(tmp_path)
    (Path(machine.tmp) / f"{PREFIX}999999999-abc").mkdir()  # a pid that is not running
    found = check(diagnose(str(ledger), roots(home), machine), "scratch copies")
    assert found.status == "warn" and "1 left by runs that were killed" in found.detail


def test_pending_rejects_and_a_slow_watcher_warn(tmp_path, home, ledger) -> None:
    conn = sqlite3.connect(ledger)
    conn.execute(
        "INSERT INTO rejects (reject_id, source_provider, unit_key, location, reason)"
        " VALUES ('r1', 'codex', '/x.jsonl', 'line 3', 'not JSON')"
    )
    conn.execute(
        "INSERT INTO import_runs (run_id, mode, started_at, finished_at, tail_lag_p50_ms,"
        " tail_lag_ms) VALUES ('live-1', 'live', '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z',"
        " 900, 125000)"
    )
    conn.commit()
    conn.close()
    findings = diagnose(str(ledger), roots(home), host(tmp_path))
    rejects, lag = check(findings, "rejects"), check(findings, "live lag")
    assert rejects.status == "warn" and "1 pending (1 codex)" in rejects.detail
    assert "tracehouse rejects" in (rejects.fix or "")
    assert lag.status == "warn" and "median 900 ms, largest 125,000 ms" in lag.detail


def test_a_read_only_postgresql_role_cannot_write(pg_schemas) -> None:
    import psycopg

    dsn = pg_schemas()
    cli("store", "init", "--store", dsn, "-q")
    with psycopg.connect(dsn, autocommit=True) as conn:
        schema = conn.execute("SELECT current_schema()").fetchone()[0]  # type: ignore[index]
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'tracehouse_reader'")
        if exists.fetchone() is None:
            conn.execute("CREATE ROLE tracehouse_reader LOGIN")
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO tracehouse_reader")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO tracehouse_reader")
    reader = dsn.replace("postgres@", "tracehouse_reader@", 1)
    found = check(diagnose(reader, {}, Host(inotify_watches_file=None)), "writable")
    assert found.status == "fail" and "cannot insert and update" in found.detail
