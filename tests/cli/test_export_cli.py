"""`tracehouse export` from the command line: every format, `--since-last`, and a JSONL export
imported back with `tracehouse import`; bad options are named, never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app

runner = CliRunner()


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    shutil.copytree(DATA / "codex" / "home" / ".codex", home / ".codex")
    path = tmp_path / "ledger.db"
    result = run("sync", "backfill", "--home", home, "--store", path, "-q")
    assert result.exit_code == 0, result.output
    return path


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [("markdown", "*.md"), ("html", "*.html"), ("jsonl", "sessions.jsonl"),
     ("otel", "traces.jsonl"), ("parquet", "*.parquet")],
)  # fmt: skip
def test_every_format_writes_its_files(
    ledger: Path, tmp_path: Path, fmt: str, expected: str
) -> None:
    out = tmp_path / fmt
    result = run("export", "--format", fmt, "--out", out, "--store", ledger)
    assert result.exit_code == 0, result.output
    assert list(out.glob(expected))
    assert not list(out.glob("*.partial"))
    if fmt != "parquet":
        assert " sessions → " in result.stdout


def test_jsonl_goes_back_in_through_import(ledger: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("export", "--format", "jsonl", "--out", out, "--store", ledger).exit_code == 0
    copy = tmp_path / "copy.db"
    result = run("import", out / "sessions.jsonl", "--store", copy, "--json")
    assert result.exit_code == 0, result.output
    response = orjson.loads(result.stdout)
    lines = (out / "sessions.jsonl").read_bytes().splitlines()
    assert [r["status"] for r in response["results"]] == ["imported"] * len(lines)


def test_since_last_reports_what_it_skipped(ledger: Path, tmp_path: Path) -> None:
    out = tmp_path / "md"
    first = run("export", "--format", "markdown", "--out", out, "--since-last", "--store", ledger)
    assert first.exit_code == 0, first.output
    again = run("export", "--format", "markdown", "--out", out, "--since-last", "--store", ledger,
                "--json")  # fmt: skip
    report = orjson.loads(again.stdout)
    assert report["written"] == 0 and report["selected"] > 0 and report["since"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "pdf"], "--format 'pdf': one of parquet, markdown, html, jsonl, otel"),
        (["--format", "parquet", "--since-last"], "not for --format parquet"),
        (["--format", "jsonl", "--context"], "--context: only for --format markdown or html"),
        (["--format", "html", "--since", "tomorrowish"], "--since"),
    ],
)
def test_bad_options_are_named(ledger: Path, tmp_path: Path, args: list[str], message: str) -> None:
    result = run("export", *args, "--out", tmp_path / "o", "--store", ledger)
    assert result.exit_code != 0
    assert message in result.output and "Traceback" not in result.output


def test_out_must_be_a_directory(ledger: Path, tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    result = run("export", "--format", "html", "--out", file, "--store", ledger)
    assert result.exit_code != 0 and "not a directory" in result.output
