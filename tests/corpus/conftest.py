"""A ledger of every fixture home, built once per test run through the CLI, as a user who
imported all of them would have it (`sync backfill --home` home by home)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracehouse.cli.app import app


@pytest.fixture(scope="session")
def all_homes_ledger(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SQLite ledger of every home under `$TRACEHOUSE_CORPUS/homes` (read only: tests copy
    it before they change it)."""
    store = tmp_path_factory.mktemp("all-homes") / "ledger.db"
    runner = CliRunner()
    for home in sorted((corpus / "homes").iterdir()):
        args = ["sync", "backfill", "--home", str(home), "--store", str(store), "-q"]
        result = runner.invoke(app, args)
        # exit 1: a home whose damaged lines are rejects, on purpose; never a crash
        assert result.exit_code in (0, 1), (home, result.output)
    return store
