"""The web view's date filters say what they filter (issue #70: two unlabelled date boxes),
and one search hit is a hit."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from tests.gateway.server import ledger_with_tokens
from tracehouse.gateway.app import GatewayConfig, create_app


def test_the_date_filters_are_labelled(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.db")
    tokens = ledger_with_tokens(ledger, {"read": ("viewer", "read")})
    with TestClient(create_app(GatewayConfig(ledger))) as client:
        headers = {"Authorization": f"Bearer {tokens['read']}"}
        listing = client.get("/", headers=headers).text
        assert '<label class="when">active from <input type="date" name="since"' in listing
        assert '<label class="when">until <input type="date" name="until"' in listing
        usage = client.get("/usage", headers=headers).text
        assert '<label class="when">from <input type="date" name="since"' in usage
