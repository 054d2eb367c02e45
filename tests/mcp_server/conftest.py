"""The data ledger (`tests/data_ledger.py`) on each backend, built once per module, and a real
gateway over it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.data_ledger import backfill
from tests.gateway.server import Gateway, make_token
from tests.pg import PgServer
from tracehouse.store import SessionStore, open_store


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
def gateway(ledger_address: str, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A real gateway over the module's ledger (each backend), with a read and an admin
    token."""
    where = tmp_path_factory.mktemp("gw")
    tokens = {scope: make_token(ledger_address, where, f"t-{scope}", scope)
              for scope in ("read", "admin")}  # fmt: skip
    served = Gateway(ledger_address, where / "gateway.log").start()
    yield served, {s: p.read_text().strip() for s, p in tokens.items()}
    served.stop()
