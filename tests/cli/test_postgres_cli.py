"""`--store postgresql://…` from the command line: a backfill, the read side, and one clear line
(exit 2 for a DSN or credentials the user must fix, 1 for a server that does not answer)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.pg import PasswordRefusingServer
from tests.pipeline.helpers import make_home
from tracehouse.cli.app import app
from tracehouse.store.postgres.migrations import known_migrations

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_line_error(result, exit_code: int) -> str:
    assert result.exit_code == exit_code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_backfill_show_and_info_on_postgresql(tmp_path, pg_schemas):
    dsn, home = pg_schemas(), make_home(tmp_path, copies=3)
    first = run("sync", "backfill", "--home", home, "--store", dsn, "--json")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["sessions"]["imported"] == 9
    again = run("sync", "backfill", "--home", home, "--store", dsn, "--json")
    assert json.loads(again.stdout)["rowsWritten"] == 0

    sqlite_ledger = tmp_path / "ledger.db"
    run("sync", "backfill", "--home", home, "--store", sqlite_ledger)
    pg_rows = json.loads(run("store", "info", "--store", dsn, "--json").stdout)["rows"]
    sqlite_rows = json.loads(run("store", "info", "--store", sqlite_ledger, "--json").stdout)
    assert pg_rows.pop("import_runs") == 2
    assert sqlite_rows["rows"].pop("import_runs") == 1
    assert pg_rows == sqlite_rows["rows"]

    listed = json.loads(run("sessions", "list", "--store", dsn, "--json").stdout)
    main = next(s for s in listed if not s["is_subagent"])
    shown = run("sessions", "show", main["label"], "--store", dsn)
    assert shown.exit_code == 0, shown.output
    assert f"session    {main['label']}" in shown.stdout
    # the read side gives the same transcript from either store
    assert shown.stdout == run("sessions", "show", main["label"], "--store", sqlite_ledger).stdout


def test_a_dsn_that_cannot_be_read_exits_2(pg_server):
    line = one_line_error(run("store", "info", "--store", "postgresql://u@127.0.0.1:port/x"), 2)
    assert "port" in line


def test_a_missing_database_exits_2(pg_server):
    dsn = pg_server.dsn.rsplit("/", 1)[0] + "/tracehouse_no_such_db"
    line = one_line_error(run("store", "info", "--store", dsn), 2)
    assert "tracehouse_no_such_db" in line
    assert "does not exist" in line


def test_a_wrong_password_exits_2_without_showing_it():
    server = PasswordRefusingServer()
    try:
        result = run("store", "info", "--store", server.dsn("Wr0ng-Secret"))
    finally:
        server.close()
    line = one_line_error(result, 2)
    assert "password authentication failed" in line
    assert "Wr0ng-Secret" not in result.output
    assert "bob:***@" in line


def test_a_server_that_does_not_answer_exits_1():
    import socket

    with socket.socket() as probe:  # a port with nothing listening on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    line = one_line_error(
        run("store", "info", "--store", f"postgresql://u:pw@127.0.0.1:{port}/x"), 1
    )
    assert "did not answer" in line
    assert "pw@" not in line


@pytest.mark.parametrize("direction", ["sqlite-first", "postgresql-first"])
def test_store_copy_both_ways_gives_identical_ledgers(tmp_path, pg_schemas, direction):
    home = make_home(tmp_path, copies=2)
    dsn, first, back = pg_schemas(), tmp_path / "first.db", tmp_path / "back.db"
    start, middle = (first, dsn) if direction == "sqlite-first" else (dsn, first)
    assert run("sync", "backfill", "--home", home, "--store", start).exit_code == 0
    copied = run("store", "copy", "--from", start, "--to", middle)
    assert copied.exit_code == 0, copied.output
    assert "6 copied" in copied.stdout
    again = json.loads(run("store", "copy", "--from", start, "--to", middle, "--json").stdout)
    assert again["copied"] == 0
    assert again["unchanged"] == 6
    assert run("store", "copy", "--from", middle, "--to", back).exit_code == 0
    counts = [
        json.loads(run("store", "info", "--store", s, "--json").stdout)["rows"]
        for s in (start, middle)
    ]
    assert {k: v for k, v in counts[0].items() if k != "import_runs"} == {
        k: v for k, v in counts[1].items() if k != "import_runs"
    }
    assert counts[1]["import_runs"] == counts[0]["import_runs"] + 2  # both copies are runs


def test_the_ledger_dsn_from_the_environment_and_from_the_config(tmp_path, pg_schemas, monkeypatch):
    dsn = pg_schemas()
    monkeypatch.setenv("TRACEHOUSE_STORE", dsn)
    info = json.loads(run("store", "info", "--json").stdout)
    assert info["backend"] == "postgresql" and info["store"] == dsn
    monkeypatch.delenv("TRACEHOUSE_STORE")
    config = tmp_path / "config.toml"
    config.write_text(f'store = "{dsn}"\n')
    info = json.loads(run("store", "info", "--config", config, "--json").stdout)
    assert info["backend"] == "postgresql" and info["schemaVersion"] == len(known_migrations())
