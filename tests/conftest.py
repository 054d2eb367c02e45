"""Shared fixtures: stores under test, the corpus location, an isolated environment."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.pg import KEPT_ENV, PgServer
from tracehouse.store import SessionStore, open_store

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache directory for a test process: the secret-scanning rules are compiled into it
    once (seconds) and loaded from it after (a quarter second), as on a user's machine, instead
    of compiled again for every test that runs a sync in a home of its own."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared_cache: Path) -> None:
    """No test reads the developer's config or writes to their data or cache directories."""
    for name in list(os.environ):
        if name.startswith("TRACEHOUSE_") and name not in KEPT_ENV:
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared_cache))


STORE_BACKENDS = ["sqlite", "postgresql"]
MAX_OPEN_STORES = 4


@pytest.fixture(scope="session")
def pg_server() -> PgServer:
    """The PostgreSQL server the tests may use; skips (or, in CI, fails) when none answers."""
    return PgServer.find()


@pytest.fixture
def pg_schemas(request: pytest.FixtureRequest) -> Iterator[Callable[[], str]]:
    """A factory of DSNs, each to a fresh schema of its own, dropped after the test."""
    server: PgServer = request.getfixturevalue("pg_server")
    made: list[str] = []

    def factory() -> str:
        schema = server.create_schema()
        made.append(schema)
        return server.dsn_for(schema)

    yield factory
    for schema in made:
        server.drop_schema(schema)


@pytest.fixture(params=STORE_BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """A factory of fresh, empty stores of one backend (several per test when needed)."""
    opened: list[SessionStore] = []
    counter = iter(range(1000))
    new_dsn = request.getfixturevalue("pg_schemas") if request.param == "postgresql" else None

    def factory() -> SessionStore:
        # The PostgreSQL server is shared (100 connections for every program on the machine):
        # a test that keeps a store per hypothesis example open starves everyone else.
        held = [s for s in opened if not getattr(s.conn, "closed", False)]  # type: ignore[attr-defined]
        assert new_dsn is None or len(held) < MAX_OPEN_STORES, (
            f"a test may hold at most {MAX_OPEN_STORES} PostgreSQL stores at once; close them"
            " per example"
        )
        where = new_dsn() if new_dsn else tmp_path / f"ledger-{next(counter)}.db"
        store = open_store(where)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store) -> SessionStore:  # type: ignore[no-untyped-def]
    return make_store()  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def corpus() -> Path:
    path = Path(os.environ.get("TRACEHOUSE_CORPUS", REPO.parent / "shared" / "fixtures"))
    if not path.is_dir():
        pytest.skip(f"corpus not found at {path}: set TRACEHOUSE_CORPUS to ../shared/fixtures")
    return path


@pytest.fixture(scope="session")
def data_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SQLite ledger of every home under tests/data (read only: copy it to change it)."""
    from tests.data_ledger import backfill

    path = tmp_path_factory.mktemp("data-ledger") / "ledger.db"
    backfill(str(path))
    return path
