"""`sync backfill` and `sessions list/show` through typer's runner, on a temp home."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.pipeline.helpers import main_file, make_home
from tracehouse.cli.app import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def home(tmp_path):
    return make_home(tmp_path)


@pytest.fixture
def ledger(tmp_path):
    return tmp_path / "ledger.db"


def test_backfill_then_again_reports_everything_skipped(home, ledger):
    first = run("sync", "backfill", "--home", home, "--store", ledger)
    assert first.exit_code == 0, first.output
    assert "3 imported" in first.stdout
    second = run("sync", "backfill", "--home", home, "--store", ledger, "--json")
    data = json.loads(second.stdout)
    assert data["sessions"] == {"imported": 0, "upserted": 0, "skipped": 0, "failed": 0}
    assert data["unchanged"] == data["units"] == 5
    assert data["rowsWritten"] == 0


def test_dry_run_writes_nothing(home, ledger):
    result = run("sync", "backfill", "--home", home, "--store", ledger, "--dry-run")
    assert result.exit_code == 0
    assert "3 would import" in result.stdout
    info = run("store", "info", "--store", ledger, "--json")
    assert json.loads(info.stdout)["rows"]["sessions"] == 0


def test_source_flag_with_a_path(home, ledger):
    result = run(
        "sync",
        "backfill",
        "--source",
        f"claude-code={home / '.claude'}",
        "--store",
        ledger,
        "--json",
    )
    assert result.exit_code == 0
    assert json.loads(result.stdout)["sessions"]["imported"] == 3


def test_an_unknown_source_is_a_user_error(home, ledger):
    result = run("sync", "backfill", "--home", home, "--source", "vim", "--store", ledger)
    assert result.exit_code == 2
    assert "unknown source 'vim'" in result.stderr


def test_rejects_exit_1_and_are_named(home, ledger):
    with main_file(home).open("ab") as f:
        f.write(b"{oops\n")
    result = run("sync", "backfill", "--home", home, "--store", ledger)
    assert result.exit_code == 1
    assert f"rejected: {main_file(home)} line 32 " in result.stderr
    assert "invalid JSON" in result.stderr


def test_sessions_list_and_show(home, ledger):
    run("sync", "backfill", "--home", home, "--store", ledger)
    listing = run("sessions", "list", "--store", ledger, "--json")
    labels = [s["label"] for s in json.loads(listing.stdout)]
    assert set(labels) == {"cc-11111111", "cc-a0fix000", "cc-7e57ab1e"}
    human = run("sessions", "list", "--store", ledger, "--provider", "claude-code")
    assert "Fix division by zero in app.py" in human.stdout
    assert " of " not in human.stderr  # nothing was cut
    cut = run("sessions", "list", "--store", ledger, "--limit", "2")
    assert cut.stderr.strip() == "2 of 3 sessions, most recent first; --limit N for more"
    show = run("sessions", "show", "cc-11111111", "--store", ledger)
    assert show.exit_code == 0, show.output
    text = show.stdout
    assert "## User [2026-03-01T10:00:00.000Z]" in text
    assert "→ Task" in text and "⇢ subagent cc-a0fix000" in text
    assert "▸ thinking folded" in text
    assert "source [web_search] https://docs.python.org/3/library/exceptions.html" in text
    assert "## Subagents" in text
    child = run("sessions", "show", "cc-a0fix000", "--store", ledger)
    assert "## User (from cc-11111111 via Task) [" in child.stdout
    as_json = json.loads(run("sessions", "show", "cc-11111111", "--store", ledger, "--json").stdout)
    assert as_json["session"]["title"] == "Fix division by zero in app.py"
    assert isinstance(as_json["session"]["metadata"], dict)
    assert len(as_json["children"]) == 2


def test_show_thinking_unfolds(home, ledger):
    run("sync", "backfill", "--home", home, "--store", ledger)
    show = run("sessions", "show", "cc-11111111", "--thinking", "--store", ledger)
    assert "> Let me read the file." in show.stdout


def test_show_an_unknown_session_is_a_user_error(home, ledger):
    run("sync", "backfill", "--home", home, "--store", ledger)
    result = run("sessions", "show", "nope", "--store", ledger)
    assert result.exit_code == 2
    assert "no session matches 'nope'" in result.stderr


def test_sessions_list_without_a_ledger(ledger):
    result = run("sessions", "list", "--store", ledger)
    assert result.exit_code == 2 and "no ledger here" in result.stderr


def test_a_missing_home_or_source_path_is_a_user_error(tmp_path, ledger):
    result = run("sync", "backfill", "--home", tmp_path / "nope", "--store", ledger)
    assert result.exit_code == 2 and "no such directory" in result.stderr
    result = run(
        "sync", "backfill", "--source", f"claude-code={tmp_path / 'nope'}", "--store", ledger
    )
    assert result.exit_code == 2 and "claude-code=" in result.stderr


def test_an_uncreatable_ledger_is_a_user_error(home, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = run("sync", "backfill", "--home", home, "--store", blocker / "sub" / "l.db")
    assert result.exit_code == 2 and "cannot create the ledger" in result.stderr
    assert "Traceback" not in result.output


def test_a_backfill_that_finds_nothing_says_where_it_looked(tmp_path, ledger):
    empty = tmp_path / "empty-home"
    empty.mkdir()
    result = run("sync", "backfill", "--home", empty, "--store", ledger)
    assert result.exit_code == 0
    assert "no agent logs found; looked in:" in result.stderr
    assert f"{empty}/.claude" in result.stderr and f"{empty}/.codex" in result.stderr
