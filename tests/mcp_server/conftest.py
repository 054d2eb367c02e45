"""A ledger of every home under tests/data, on each backend, built once per module through the
CLI (`sync backfill --home`), as the MCP tools read it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tests.gateway.server import Gateway, make_token
from tests.pg import PgServer
from tracehouse.cli.app import app
from tracehouse.sinks import SessionStore, open_store

HOMES = ("claude/home", "codex/home", "gemini/home", "opencode/home", "cursor_agent/home")


def backfill(store: str) -> None:
    runner = CliRunner()
    for home in HOMES:
        args = ["sync", "backfill", "--home", str(DATA / home), "--store", store, "-q"]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (home, result.output)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def ledger_address(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """Where the data ledger is: a SQLite path or a PostgreSQL DSN (a schema of its own)."""
    if request.param == "postgresql":
        server: PgServer = request.getfixturevalue("pg_server")
        schema = server.create_schema()
        address = server.dsn_for(schema)
        backfill(address)
        yield address
        server.drop_schema(schema)
        return
    path = tmp_path_factory.mktemp("mcp") / "ledger.db"
    backfill(str(path))
    yield str(path)


@pytest.fixture(scope="module")
def ledger(ledger_address: str) -> Iterator[SessionStore]:
    store = open_store(ledger_address, create=False)
    yield store
    store.close()


@pytest.fixture(scope="module")
def sqlite_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mcp-sqlite") / "ledger.db"
    backfill(str(path))
    return path


@pytest.fixture(scope="module")
def gateway(sqlite_ledger: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A real gateway over the SQLite data ledger, with a read and an admin token."""
    where = tmp_path_factory.mktemp("gw")
    tokens = {scope: make_token(str(sqlite_ledger), where, f"t-{scope}", scope)
              for scope in ("read", "admin")}  # fmt: skip
    served = Gateway(str(sqlite_ledger), where / "gateway.log").start()
    yield served, {s: p.read_text().strip() for s, p in tokens.items()}
    served.stop()
