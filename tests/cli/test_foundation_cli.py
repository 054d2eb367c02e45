"""Foundation commands through typer's runner: store init/info and import, good and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tests.store.factory import item, request
from tracehouse.cli.app import app
from tracehouse.store.sqlite.migrations import known_migrations

runner = CliRunner()

SCHEMA_VERSION = len(known_migrations())


def run(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    return str(tmp_path / "ledger.db")


def test_store_init_then_info(ledger):
    result = run("store", "init", "--store", ledger)
    assert result.exit_code == 0, result.output
    assert f"schema version {SCHEMA_VERSION}" in result.stdout
    info = run("store", "info", "--store", ledger, "--json")
    assert info.exit_code == 0
    data = json.loads(info.stdout)
    assert data["schemaVersion"] == SCHEMA_VERSION
    assert data["rows"]["sessions"] == 0
    human = run("store", "info", "--store", ledger)
    assert "message_sources" in human.stdout


def test_store_info_without_a_ledger_is_a_user_error(ledger):
    result = run("store", "info", "--store", ledger)
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "no ledger here" in result.stderr
    assert not Path(ledger).exists()


def test_store_in_the_default_data_dir(tmp_path):
    result = run("store", "init", "--json")
    assert result.exit_code == 0
    path = Path(json.loads(result.stdout)["store"])
    assert path.is_relative_to(tmp_path / "xdg-data")
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_import_twice_prints_imported_then_the_stored_response(ledger):
    file = str(DATA / "request.json")
    first = run("import", file, "--store", ledger)
    assert first.exit_code == 0, first.output
    assert "2 imported" in first.stdout
    second = run("import", file, "--store", ledger, "--json")
    assert second.exit_code == 0
    data = json.loads(second.stdout)
    assert data["replayed"] is True
    assert data["imported"] == 2


def test_import_from_stdin(ledger):
    body = orjson.dumps(request([item("x")])).decode()
    result = run("import", "-", "--store", ledger, "--json", input=body)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["imported"] == 1


def test_import_with_a_failed_item_exits_1_and_names_it(ledger, tmp_path):
    bad = item("bad")
    bad["messages"][0]["role"] = "robot"
    path = tmp_path / "req.json"
    path.write_bytes(orjson.dumps(request([item("good"), bad])))
    result = run("import", str(path), "--store", ledger)
    assert result.exit_code == 1
    assert "failed" in result.stdout
    assert "messages[0].role" in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        (b"{not json", "not valid JSON"),
        (b'{"items": []}', "no items"),
        (b'{"items": [{}], "colour": 1}', "unknown field `colour`"),
        (b"[1, 2]", "JSON object"),
    ],
)
def test_bad_requests_are_one_line_and_exit_2(ledger, tmp_path, content, message):
    path = tmp_path / "req.json"
    if content is not None:
        path.write_bytes(content)
    result = run("import", str(path), "--store", ledger)
    assert result.exit_code == 2
    assert message in result.stderr
    assert str(path) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_a_bad_setting_names_the_setting_and_the_file(ledger, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("workers = -3\n")
    result = run("store", "info", "--store", ledger, "--config", str(config))
    assert result.exit_code == 2
    assert "workers" in result.stderr and str(config) in result.stderr


def test_a_newer_schema_is_refused(ledger):
    run("store", "init", "--store", ledger)
    import sqlite3

    conn = sqlite3.connect(ledger)
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at)"
        " VALUES ('tracehouse', 'm999_future', '2030-01-01')"
    )
    conn.commit()
    conn.close()
    result = run("store", "info", "--store", ledger)
    assert result.exit_code == 2
    assert "newer tracehouse" in result.stderr


def test_a_file_that_is_not_a_ledger_is_refused(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("just text, not sqlite " * 100)
    result = run("store", "info", "--store", str(path))
    assert result.exit_code == 2
    assert "not a tracehouse ledger" in result.stderr
