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


def test_the_gateway_gives_the_teams_limits_the_cli_gives(tmp_path: Path) -> None:
    """`[[limits]]` in the gateway's config: `GET /v1/usage/limits` says what `tracehouse usage
    limits --json` says with the same config, and the usage page lists them, a crossed one so."""
    from datetime import UTC, datetime, timedelta

    from tracehouse.config import parse_limits
    from tracehouse.gateway.serve import ServeOptions

    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    hour_ago = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:")
    for path in (home / ".claude").rglob("*.jsonl"):  # its turns spent this month
        text = path.read_text().replace("2026-03-01T10:", hour_ago)
        path.write_text(text.replace("2026-02-01T09:", hour_ago))
    ledger = str(tmp_path / "ledger.db")
    synced = CliRunner().invoke(app, ["sync", "backfill", "--home", str(home), "--store", ledger])
    assert synced.exit_code == 0, synced.output
    tables = [{"tokens": 1, "per": "month"}, {"cost": 1000.0, "per": "day", "provider": "codex"}]
    config = tmp_path / "config.toml"
    config.write_text(
        "[[limits]]\ntokens = 1\nper = \"month\"\n\n"
        "[[limits]]\ncost = 1000.0\nper = \"day\"\nprovider = \"codex\"\n"
    )
    printed = CliRunner().invoke(app, ["usage", "limits", "--json", "--store", ledger,
                                       "--config", str(config)])  # fmt: skip
    assert printed.exit_code == 0, printed.output
    tokens = ledger_with_tokens(ledger, {"read": ("viewer", "read")})
    options = ServeOptions(store=ledger, limits=tables)  # as `serve` hands them to its workers
    assert options.config().limits == parse_limits(tables)
    with TestClient(create_app(options.config())) as client:
        headers = {"Authorization": f"Bearer {tokens['read']}"}
        served = client.get("/v1/usage/limits", headers=headers)
        page = client.get("/usage", headers=headers).text
        bare = client.get("/v1/usage/limits", headers={"Authorization": "Bearer nope"})
    assert served.status_code == 200 and bare.status_code == 401
    assert served.json() == json.loads(printed.stdout)
    assert [s["scope"] for s in served.json()["limits"]] == ["everything", "codex"]
    assert '<table id="limits"' in page and "<strong>crossed</strong>" in page
