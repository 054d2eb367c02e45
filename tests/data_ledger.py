"""A ledger of every home under tests/data, built through the CLI (`sync backfill --home`) as a
user who imported all of them would have it: what the readers' tests (MCP, agents) read."""

from __future__ import annotations

from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app

HOMES = ("claude/home", "codex/home", "gemini/home", "opencode/home", "cursor_agent/home")


def backfill(store: str) -> None:
    runner = CliRunner()
    for home in HOMES:
        args = ["sync", "backfill", "--home", str(DATA / home), "--store", store, "-q"]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (home, result.output)
