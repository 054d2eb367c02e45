"""The team ledger every test here is given, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.gateway.server import ledger_address, ledger_with_tokens
from tests.security.team import MACHINES
from tracehouse.gateway.app import GatewayConfig, create_app


@pytest.fixture(params=["sqlite", "postgresql"])
def team(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    address = ledger_address(request, tmp_path)
    tokens = ledger_with_tokens(address, {**{m: (m, "push") for m in MACHINES},
                                          "viewer": ("viewer", "read")})  # fmt: skip
    with TestClient(create_app(GatewayConfig(address))) as client:
        client.tokens = tokens  # type: ignore[attr-defined]
        client.address = address  # type: ignore[attr-defined]
        yield client
