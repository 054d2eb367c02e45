"""Shared fixtures: stores under test, the corpus location, an isolated environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracehouse.sinks import SessionStore, open_store

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's config or writes to their data directory."""
    for name in list(os.environ):
        if name.startswith("TRACEHOUSE_") and name not in ("TRACEHOUSE_CORPUS",):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


STORE_BACKENDS = ["sqlite"]


@pytest.fixture(params=STORE_BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """A factory of fresh, empty stores of one backend (several per test when needed)."""
    opened: list[SessionStore] = []
    counter = iter(range(1000))

    def factory() -> SessionStore:
        store = open_store(tmp_path / f"ledger-{next(counter)}.db")
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
