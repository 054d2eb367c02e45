"""Every console sample in the README and docs/ is what the CLI prints today, on the fixtures.

TRACEHOUSE_UPDATE_DOCS=1 uv run pytest tests/docs   # rewrite the samples from a real run
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import REPO
from tests.docs.samples import FIXTURES, Page, Step, matches, read_page, rewritten
from tracehouse.cli.app import app

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
UPDATE = os.environ.get("TRACEHOUSE_UPDATE_DOCS") == "1"


def pages_with_samples() -> list[Path]:
    return [p for p in PAGES if read_page(p).commands]


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """What a fresh machine has: no config, no ledger, times in UTC."""
    for name in list(os.environ):
        if name.startswith("TRACEHOUSE_") and name not in ("TRACEHOUSE_CORPUS",):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("TRACEHOUSE_STORE", str(tmp_path / "ledger.db"))
    monkeypatch.setenv("TZ", "UTC")
    # run where files the samples write land in the sandbox; tests/data as in the repository
    (tmp_path / "tests").symlink_to(REPO / "tests")
    monkeypatch.chdir(tmp_path)
    time.tzset()
    yield tmp_path
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("path", pages_with_samples(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_sample_is_what_the_cli_prints(path: Path, sandbox: Path, corpus: Path) -> None:
    page = read_page(path)
    corpus = (REPO / corpus).resolve()  # the tests name it from the repository; we run elsewhere
    runner = CliRunner()
    drifted, updates = [], []
    for command in page.commands:
        actual = _run(runner, command.steps, corpus)
        if not matches(command.expected, actual, str(corpus)):
            drifted.append(f"$ {command.line}\n--- the page shows\n" + "\n".join(command.expected)
                           + "\n--- the CLI prints\n" + "\n".join(actual))  # fmt: skip
            named = (
                "../shared/fixtures"
                if path.name == "README.md" and path.parent == REPO
                else FIXTURES[1]
            )
            shown = [line.replace(str(corpus), named) for line in actual]
            updates.append((command, rewritten(command.expected, shown)))
    if UPDATE and updates:
        _rewrite(page, updates)
    assert not drifted, f"{path.name}: samples that drifted\n\n" + "\n\n".join(drifted)


def _run(runner: CliRunner, steps: list[Step], corpus: Path) -> list[str]:
    output = ""
    for step in steps:
        if step.cut is not None:
            lines = output.splitlines()
            kept = lines[: step.cut[1]] if step.cut[0] == "head" else lines[-step.cut[1] :]
            output = "".join(f"{line}\n" for line in kept)
            continue
        args = step.args
        for name in FIXTURES:
            args = [a.replace(name, str(corpus)) for a in args]
        output = runner.invoke(app, args, input=output or None, env=step.env).output
    return output.splitlines()


def _rewrite(page: Page, updates: list) -> None:  # type: ignore[type-arg]
    text = page.text
    for command, lines in sorted(updates, key=lambda u: -u[0].at):
        body = "".join(f"{line}\n" for line in lines)
        text = text[: command.at] + body + text[command.end :]
    page.path.write_text(text, encoding="utf-8")


def test_a_runs_time_matches_on_any_day_and_a_fixtures_time_only_itself() -> None:
    shown = ["2026-11-28 00:44  run_20261128T004418_7c7d8824  imported  7     5467200a"]
    today = ["2026-12-01 22:06  run_20261201T220602_c9e1f9f0  imported  7     5467200a   "]
    assert matches(shown, today)
    # imported a minute after the run started
    assert matches(
        shown, ["2026-12-02 00:02  run_20261202T000158_5cb7441a  imported  7     5467200a   "]
    )
    assert not matches(
        shown, ["2026-12-01 22:06  run_20261201T220602_c9e1f9f0  imported  8  5467200a"]
    )
    # a session's own time (from the fixtures) is compared as it is
    assert not matches(["cc-1  2026-05-20 07:38"], ["cc-1  2026-05-21 07:38"])
