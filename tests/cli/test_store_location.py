"""`--store` names a SQLite file or a PostgreSQL DSN, and nothing else; no password is shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracehouse.cli.app import app
from tracehouse.errors import ConfigError
from tracehouse.store.location import masked, parse_store

runner = CliRunner()


@pytest.mark.parametrize(
    ("text", "backend", "target"),
    [
        ("ledger.db", "sqlite", "ledger.db"),
        ("sqlite:///ledger.db", "sqlite", "ledger.db"),
        ("sqlite:////tmp/ledger.db", "sqlite", "/tmp/ledger.db"),
        ("postgresql://u@db/x", "postgresql", "postgresql://u@db/x"),
        ("postgres://db/x", "postgresql", "postgres://db/x"),
        ("host=db dbname=ledger user=me", "postgresql", "host=db dbname=ledger user=me"),
    ],
)
def test_each_kind_of_store_is_recognised(text, backend, target):
    where = parse_store(text)
    assert (where.backend, where.target) == (backend, target)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mysql://db/x", "unknown kind of store 'mysql://'"),
        ("sqlite://x.db", "write sqlite:///relative.db"),
        ("host=db port", 'missing "="'),
        ("postgresql://u:pw@[bad", "not a valid PostgreSQL DSN"),
        ("  ", "empty"),
    ],
)
def test_anything_else_is_refused_in_one_line(text, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")) as caught:
        parse_store(text)
    assert "pw" not in str(caught.value)
    result = runner.invoke(app, ["store", "info", "--store", text])
    assert result.exit_code == 2 and result.output.startswith("tracehouse: ")
    assert list(Path(tmp_path).iterdir()) == []  # no file or directory named after it


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://bob:pw@db/x", "postgresql://bob:***@db/x"),
        (
            "postgresql://db/x?password=pw&sslmode=require",
            "postgresql://db/x?password=***&sslmode=require",
        ),
        ("host=db password=pw dbname=x", "host=db password=*** dbname=x"),
        ("host=db password='p w' dbname=x", "host=db password=*** dbname=x"),
    ],
)
def test_no_password_is_ever_shown(dsn, shown):
    assert masked(dsn) == shown
