"""The 5-hour blocks on the gateway (issue #68): `GET /v1/usage/blocks` returns what
`tracehouse usage blocks --json` prints for the same ledger and filters, and the usage page
lists the latest blocks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.conftest import DATA
from tests.gateway.server import ledger_with_tokens
from tracehouse.cli.app import app
from tracehouse.gateway.app import GatewayConfig, create_app


def test_the_gateway_gives_the_blocks_the_cli_gives(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for source in ("claude", "codex"):
        shutil.copytree(DATA / source / "home", home, dirs_exist_ok=True)
    ledger = str(tmp_path / "ledger.db")
    synced = CliRunner().invoke(app, ["sync", "backfill", "--home", str(home), "--store", ledger])
    assert synced.exit_code == 0, synced.output
    tokens = ledger_with_tokens(ledger, {"read": ("viewer", "read")})
    printed = CliRunner().invoke(app, ["usage", "blocks", "--json", "--provider", "claude-code",
                                       "--store", ledger])  # fmt: skip
    with TestClient(create_app(GatewayConfig(ledger))) as client:
        headers = {"Authorization": f"Bearer {tokens['read']}"}
        served = client.get("/v1/usage/blocks", params={"provider": "claude-code"},
                            headers=headers)  # fmt: skip
        page = client.get("/usage", headers=headers).text
    assert served.status_code == 200
    assert served.json() == json.loads(printed.stdout) and served.json()["blocks"]
    assert '<table id="blocks"' in page and page.count("<td>claude-code</td>") >= 1
