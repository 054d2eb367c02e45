"""The README documents every CLI command (STYLE: a CLI reference kept in sync by a test)."""

from __future__ import annotations

import typer

from tests.conftest import REPO
from tracehouse.cli.app import app


def command_paths(group: typer.Typer, prefix: str = "tracehouse") -> list[str]:
    paths = [f"{prefix} {c.name or c.callback.__name__}" for c in group.registered_commands]
    for sub in group.registered_groups:
        paths.extend(command_paths(sub.typer_instance, f"{prefix} {sub.name}"))
    return paths


def test_every_command_is_in_the_readme():
    readme = (REPO / "README.md").read_text()
    commands = command_paths(app)
    assert "tracehouse sync backfill" in commands
    missing = [c for c in commands if c not in readme]
    assert missing == []


def test_the_readme_starts_with_the_two_setup_commands():
    head = (REPO / "README.md").read_text()[:400]
    assert "uv run tracehouse sync backfill" in head and "uv run pytest" in head


def test_every_command_takes_the_common_options_and_keeps_its_own_help():
    from typer.testing import CliRunner

    runner = CliRunner()
    for path in command_paths(app):
        result = runner.invoke(app, [*path.split()[1:], "--help"])
        assert result.exit_code == 0, path
        for option in ("--store", "--config", "--json", "--quiet", "--verbose"):
            assert option in result.stdout, (path, option)
    backfill = runner.invoke(app, ["sync", "backfill", "--help"]).stdout
    assert "Treat DIR as the home" in backfill and "--dry-run" in backfill


def test_the_schema_page_is_generated_from_the_tables() -> None:
    from tracehouse.model.schema_doc import render

    page = (REPO / "docs" / "schema.md").read_text()
    assert page == render(), "run: uv run python -m tracehouse.model.schema_doc > docs/schema.md"


def test_every_column_has_a_description() -> None:
    from tracehouse.model.schema_doc import describe
    from tracehouse.model.tables import ALL_TABLES

    assert all(describe(t, c) for t in ALL_TABLES for c in t.columns)


def test_the_docs_stand_alone() -> None:
    """A user never sees the design folder beside the repository: the docs never point there
    (the README's examples may read the fixture homes, as the tests do)."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text()
        assert "DESIGN.md" not in text and "shared/reference" not in text, page
        assert page.name == "README.md" or "../shared" not in text, page
    links = [
        (page, target)
        for page in pages
        for target in __import__("re").findall(r"\]\((?![a-z]+:)([^)#:]+)[^)]*\)", page.read_text())
    ]
    broken = [(p.name, t) for p, t in links if not (p.parent / t).exists()]
    assert broken == []
