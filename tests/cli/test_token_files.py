"""Token files (issue #38): `serve tokens add -o FILE` makes a new file only its owner reads,
and a token file others can read is refused, saying how to fix it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from typer.testing import CliRunner

from tracehouse.cli.app import app

runner = CliRunner()


def run(*args: object) -> object:
    return runner.invoke(app, [str(a) for a in args])


def test_a_token_is_written_to_a_new_private_file(tmp_path: Path) -> None:
    ledger, token = tmp_path / "gateway.db", tmp_path / "laptop.token"
    made = run(
        "serve", "tokens", "add", "laptop", "--scope", "push", "-o", token, "--store", ledger
    )
    assert made.exit_code == 0, made.output
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert token.read_text().startswith("thk_") and "thk_" not in made.stdout
    again = run(
        "serve", "tokens", "add", "other", "--scope", "push", "-o", token, "--store", ledger
    )
    assert again.exit_code == 2 and "exists already" in again.output


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "push.token"
    token.write_text("thk_" + "x" * 40 + "\n")
    os.chmod(token, 0o644)
    answer = run("sync", "backfill", "--home", tmp_path, "--store", "https://127.0.0.1:9",
                 "--token-file", token)  # fmt: skip
    assert answer.exit_code == 2
    assert "readable by others (mode 0644)" in answer.output and "chmod 600" in answer.output
