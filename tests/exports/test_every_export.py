"""Every export of any ledger tracehouse writes succeeds: every format, over any selection of
its sessions (a hypothesis property), on the ledger of every home under tests/data (the shapes
today's agent releases write among them, and a side question that replays its parent) and on
a ledger the release before this one wrote (`tests/data/ledgers`). The corpus's own homes are
checked the same way in tests/corpus."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.conftest import DATA
from tests.data_ledger import backfill
from tracehouse.cli.app import app

FORMATS = ["parquet", "markdown", "html", "jsonl", "otel", "sessions-import"]
MORE_HOMES = ("claude/released", "claude/aside", "codex/released", "gemini/released")


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("every-export")
    today = folder / "today.db"
    backfill(str(today))
    runner = CliRunner()
    for home in MORE_HOMES:
        done = runner.invoke(app, ["sync", "backfill", "--home", str(DATA / home), "--store",
                                   str(today), "-q"])  # fmt: skip
        assert done.exit_code == 0, (home, done.output)
    before = folder / "before.db"
    with sqlite3.connect(before) as conn:
        conn.executescript((DATA / "ledgers" / "before-token-convention.sql").read_text())
    return {"today": today, "before": before}


def labels(ledger: Path) -> list[str]:
    with sqlite3.connect(ledger) as conn:
        return sorted(r[0] for r in conn.execute("SELECT label FROM sessions"))


def export(ledger: Path, out: Path, fmt: str, chosen: list[str]) -> Any:
    args = ["export", "--format", fmt, "--out", str(out), "--store", str(ledger)]
    for label in chosen:
        args += ["--label", label]
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize("which", ["today", "before"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_whole_ledger_exports(ledgers: dict[str, Path], which: str, fmt: str,
                                  tmp_path: Path) -> None:  # fmt: skip
    done = export(ledgers[which], tmp_path / "out", fmt, [])
    assert done.exit_code == 0, done.output
    assert any((tmp_path / "out").iterdir())


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(data=st.data())
def test_any_selection_exports_in_any_format(ledgers: dict[str, Path], tmp_path: Path,
                                             data: st.DataObject) -> None:  # fmt: skip
    ledger = ledgers[data.draw(st.sampled_from(["today", "before"]))]
    chosen = data.draw(st.lists(st.sampled_from(labels(ledger)), min_size=1, max_size=4,
                                unique=True))  # fmt: skip
    fmt = data.draw(st.sampled_from(FORMATS))
    out = tmp_path / f"out-{abs(hash((fmt, *chosen)))}"
    done = export(ledger, out, fmt, chosen)
    assert done.exit_code == 0, (fmt, chosen, done.output)
