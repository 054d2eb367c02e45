"""`sessions delete`, `sessions restore` and `sessions show --history` from the CLI, with a sync
that reads the deleted session's file again in between."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app

runner = CliRunner()
MAIN = "11111111-1111-4111-8111-111111111111"


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def test_delete_restore_and_history(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    ledger = tmp_path / "ledger.db"
    assert run("sync", "backfill", "--home", home, "--store", ledger, "-q").exit_code == 0
    listed = json.loads(run("sessions", "list", "--store", ledger, "--json").stdout)
    main = next(r for r in listed if r["label"] == "cc-11111111")
    assert any(r["parent_session_id"] == main["session_id"] for r in listed)

    refused = run("sessions", "delete", "cc-11111111", "--store", ledger)
    assert refused.exit_code == 2 and "--with-subagents" in refused.stderr
    done = run("sessions", "delete", "cc-11111111", "--with-subagents", "--store", ledger)
    assert done.exit_code == 0 and "deleted 3 session(s)" in done.stdout

    # The file grows: the sync reads it again, and the tombstone keeps the session out.
    path = next((home / ".claude" / "projects").rglob(f"{MAIN}.jsonl"))
    line = json.loads(path.read_text().splitlines()[0])
    path.write_text(path.read_text() + json.dumps({**line, "uuid": "late-1"}) + "\n")
    synced = run("sync", "backfill", "--home", home, "--store", ledger, "--json")
    assert json.loads(synced.stdout)["sessions"]["imported"] == 0
    assert run("sessions", "show", "cc-11111111", "--store", ledger).exit_code == 2

    back = run("sessions", "restore", "cc-11111111", "--store", ledger)
    assert back.exit_code == 0 and "restored cc-11111111" in back.stdout
    assert run("sync", "backfill", "--home", home, "--store", ledger, "-q").exit_code == 0
    history = run("sessions", "show", "cc-11111111", "--history", "--store", ledger, "--json")
    assert [r["status"] for r in json.loads(history.stdout)] == ["imported"]
    table = run("sessions", "show", "cc-11111111", "--history", "--store", ledger)
    assert "1 import(s) changed it" in table.stdout
    assert run("sessions", "restore", "cc-11111111", "--store", ledger).exit_code == 2


def test_show_follows_the_active_branch_and_marks_the_others(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.db"
    home = DATA / "claude" / "fork-home"
    assert run("sync", "backfill", "--home", home, "--store", ledger, "-q").exit_code == 0
    shown = run("sessions", "show", "cc-eeeeeeee", "--store", ledger).stdout
    assert "And a test" in shown and "Round to cents" not in shown
    assert "⎇ a branch of 2 turn(s)" in shown and "--all-branches" in shown
    every = run("sessions", "show", "cc-eeeeeeee", "--all-branches", "--store", ledger).stdout
    assert "Round to cents" in every and "⎇" not in every
