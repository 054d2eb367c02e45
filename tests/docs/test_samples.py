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
from tests.docs.samples import (
    FIXTURES,
    Command,
    Page,
    Step,
    faults,
    matches,
    read_page,
    rewritten,
    unshown_errors,
)
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
    faulty, ran = [], []
    for command in page.commands:
        actual, exit_codes = _run(runner, command.steps, corpus)
        faulty += [f"$ {command.line}: {fault}" for fault in faults(command, exit_codes, actual)]
        ran.append((command, exit_codes))
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
    faulty += unshown_errors(ran)
    assert not faulty, f"{path.name}: samples that show a failure as a success\n" + "\n".join(
        faulty
    )


def _run(runner: CliRunner, steps: list[Step], corpus: Path) -> tuple[list[str], list[int]]:
    """What the pipeline shows on a terminal, and each command's exit code. A command piped into
    another tracehouse command passes its standard output on; its standard error (a summary
    line) reaches the terminal, ahead of what the last command prints."""
    output, terminal, exit_codes = "", "", []
    for at, step in enumerate(steps):
        if step.cut is not None:
            lines = output.splitlines()
            kept = lines[: step.cut[1]] if step.cut[0] == "head" else lines[-step.cut[1] :]
            output = "".join(f"{line}\n" for line in kept)
            continue
        args = step.args
        for name in FIXTURES:
            args = [a.replace(name, str(corpus)) for a in args]
        result = runner.invoke(app, args, input=output or None, env=step.env)
        piped = at + 1 < len(steps) and steps[at + 1].cut is None
        output = result.stdout if piped else result.output
        terminal += result.stderr if piped else ""
        exit_codes.append(result.exit_code)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            output += "Traceback (most recent call last):\n"  # what a terminal would show
    return (terminal + output).splitlines(), exit_codes


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


def test_a_sample_that_shows_a_failure_fails_unless_its_block_says_so() -> None:
    failing = Command("uv run tracehouse export --format md", ["tracehouse: no ledger here"], 0, 0)
    assert faults(failing, [1], failing.expected) == ["exits 1"]
    temporary = Command("uv run tracehouse store init", ["/tmp/pytest-of-root/p/ledger.db"], 0, 0)
    assert faults(temporary, [0], []) == ["the page shows a temporary path"]
    assert faults(Command("x", [], 0, 0), [0], ["Traceback (most recent call last):"]) == [
        "prints a traceback"
    ]
    on_purpose = Command("uv run tracehouse sync backfill --workers 0", ["error"], 0, 0, True, 3)
    works = Command("uv run tracehouse --version", ["tracehouse 0.1.0"], 0, 0, True, 3)
    assert faults(on_purpose, [2], []) == []
    assert unshown_errors([(works, [0]), (on_purpose, [2])]) == []
    assert unshown_errors([(works, [0])]) == [
        "block 4 is marked `console error`, but its commands work"
    ]
