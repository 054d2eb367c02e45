"""`resume` decides that the agent still has a session by where that agent looks on this
machine, not by where the ledger read it (issue #70): a backup imported with `--home` is no
session of this machine's `~/.claude`, so `resume` writes it back instead of printing a
`claude --resume` that finds nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app

runner = CliRunner()


def test_a_backup_imported_with_home_is_written_back_not_claimed_present(tmp_path: Path) -> None:
    backup, me = tmp_path / "backup", tmp_path / "me"
    shutil.copytree(DATA / "claude" / "home", backup)
    (me / ".claude").mkdir(parents=True)
    ledger = str(tmp_path / "ledger.db")
    done = runner.invoke(app, ["sync", "backfill", "--home", str(backup), "--store", ledger, "-q"])
    assert done.exit_code == 0, done.output
    listed = json.loads(runner.invoke(app, ["sessions", "list", "--json", "--no-subagents",
                                            "--provider", "claude-code", "--store", ledger]).stdout)
    label = listed[0]["label"]
    env = {"HOME": str(me), "CLAUDE_CONFIG_DIR": ""}
    shown = runner.invoke(app, ["sessions", "show", label, "--store", ledger], env=env).stdout
    assert f"tracehouse resume {label}" in shown and "claude --resume" not in shown
    plan = runner.invoke(app, ["resume", label, "--dry-run", "--json", "--cwd", str(tmp_path),
                               "--store", ledger], env=env)  # fmt: skip
    answer = json.loads(plan.stdout)
    assert answer["action"] == "restore"
    assert Path(answer["path"]).is_relative_to(me / ".claude" / "projects")
    # Once written where Claude Code looks, it is the agent's: present, nothing written again.
    assert runner.invoke(app, ["resume", label, "--cwd", str(tmp_path), "--store", ledger],
                         env=env).exit_code == 0  # fmt: skip
    again = runner.invoke(app, ["resume", label, "--json", "--cwd", str(tmp_path), "--store",
                                ledger], env=env)  # fmt: skip
    assert json.loads(again.stdout)["action"] == "present"
