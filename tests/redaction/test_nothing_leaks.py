"""Secrets planted in every source's logs: no byte of one reaches any file tracehouse writes —
the ledger (rows, search index, cursors, rejects), every export, a gateway's ledger — on both
stores; and a ledger stored before redaction is cleaned in place by `secrets redact`."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from typer.testing import CliRunner

from tests.gateway.server import Gateway, make_token, push
from tests.redaction.plant_home import files_under, leaked, planted_home, written_bytes
from tests.redaction.planted import Planted
from tracehouse.cli.app import app
from tracehouse.model.tables import PROVIDERS

runner = CliRunner()
EXPORTS = ("parquet", "markdown", "html", "jsonl", "otel", "sessions-import")


def cli(*args: object, ok: bool = True) -> Any:
    result = runner.invoke(app, [str(a) for a in args])
    if ok:
        assert result.exit_code == 0, (args, result.output, result.exception)
    return result


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Planted]]:
    return planted_home(tmp_path_factory.mktemp("planted"))


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A factory of fresh ledger addresses of one backend."""
    made = iter(range(100))

    def new() -> str:
        if request.param == "postgresql":
            return str(request.getfixturevalue("pg_schemas")())
        return str(tmp_path / f"ledger-{next(made)}.db")

    return new


def reaching(store: str, planted: list[Planted]) -> dict[str, int]:
    """Per provider, the planted secrets its stored sessions hold (how many reached the ledger)."""
    from tracehouse.store import open_store

    ledger = open_store(store)
    try:
        counts = {}
        for provider in PROVIDERS:
            rows = ledger.query(
                "SELECT m.content AS t FROM messages m JOIN sessions s USING (session_id)"
                " WHERE s.source_provider = ? UNION ALL SELECT c.result FROM tool_calls c"
                " JOIN sessions s USING (session_id) WHERE s.source_provider = ?",
                (provider, provider),
            )
            text = "\n".join(str(r["t"]) for r in rows).encode()
            counts[provider] = len(leaked(text, planted))
        return counts
    finally:
        ledger.close()


def test_no_planted_secret_reaches_the_ledger_or_an_export(planted, store_at, tmp_path) -> None:
    home, secrets = planted
    verbatim = store_at()
    cli("sync", "backfill", "--home", home, "--store", verbatim, "--no-redact", "-q")
    # The plants are where the parsers read: every source stores some of them when asked to.
    reached = reaching(verbatim, secrets)
    assert all(reached[p] > 0 for p in PROVIDERS), reached
    assert len(leaked(written_bytes(verbatim), secrets)) >= 100

    store = store_at()
    report = orjson.loads(
        cli("sync", "backfill", "--home", home, "--store", store, "--json").stdout
    )
    assert sum(report["redacted"].values()) >= 100
    assert leaked(written_bytes(store), secrets) == []
    for format in EXPORTS:
        out = tmp_path / f"export-{format}"
        cli("export", "--format", format, "-o", out, "--store", store, "-q")
        assert leaked(files_under(out), secrets) == [], format
        assert (out / "manifest.json").stat().st_mode & 0o777 == 0o600
        assert out.stat().st_mode & 0o777 == 0o700
        manifest = orjson.loads((out / "manifest.json").read_bytes())
        assert sum(manifest["secrets"]["markers"].values()) > 0


def test_secrets_redact_cleans_a_ledger_stored_before(planted, store_at) -> None:
    home, secrets = planted
    store = store_at()
    cli("sync", "backfill", "--home", home, "--store", store, "--no-redact", "-q")
    scanned = cli("secrets", "scan", "--store", store, "--json", ok=False)
    assert scanned.exit_code == 1  # found: as a scanner says so to a script (issue #70)
    found = orjson.loads(scanned.stdout)
    assert len(found) >= 100 and all(f["preview"].endswith("chars)") for f in found)
    assert not any(p.value in f["preview"] for f in found for p in secrets)

    done = orjson.loads(cli("secrets", "redact", "--store", store, "--json").stdout)
    assert done["rewritten"] > 0 and sum(done["redacted"].values()) >= 100
    assert leaked(written_bytes(store), secrets) == []
    cli("store", "verify", "--store", store, "-q")
    assert orjson.loads(cli("secrets", "scan", "--store", store, "--json").stdout) == []
    again = orjson.loads(cli("secrets", "redact", "--store", store, "--json").stdout)
    assert again["rewritten"] == 0
    hits = cli("search", "REDACTED", "--store", store, "--json").stdout
    assert orjson.loads(hits)  # the markers are searchable
    runs = cli("runs", "--store", store).stdout
    assert "migration: secrets redacted:" in runs and "github-pat ×" in runs
    # A sync afterwards finds every file unchanged, and a full re-read changes no row.
    report = orjson.loads(
        cli("sync", "backfill", "--home", home, "--store", store, "--json").stdout
    )
    assert report["sessions"]["imported"] == report["sessions"]["upserted"] == 0


@pytest.mark.slow
def test_a_gateway_stores_no_planted_secret_whoever_pushes(planted, tmp_path) -> None:
    home, secrets = planted
    gateway_store = tmp_path / "gateway.db"
    token = make_token(str(gateway_store), tmp_path, "laptop", "push")
    gateway = Gateway(str(gateway_store), tmp_path / "gateway.log").start()
    try:
        pusher = push(home, gateway.url, token, "laptop")
        _, err = pusher.communicate(timeout=120)
        assert pusher.returncode == 0, err.decode()

        refused = push(home, gateway.url, token, "laptop", "--no-redact")
        _, err = refused.communicate(timeout=120)
        assert refused.returncode != 0 and b"--allow-unredacted" in err

        # An old client, or another producer, sends what it holds verbatim: redacted on arrival.
        verbatim = tmp_path / "verbatim.db"
        cli("sync", "backfill", "--home", home, "--store", verbatim, "--no-redact", "-q")
        out = tmp_path / "requests"
        os.environ["TRACEHOUSE_REDACT"] = "false"  # the export is as verbatim as its ledger
        try:
            cli("export", "--format", "sessions-import", "-o", out, "--store", verbatim, "-q")
        finally:
            del os.environ["TRACEHOUSE_REDACT"]
        lines = (out / "requests.jsonl").read_bytes().splitlines()
        assert leaked(b"\n".join(lines), secrets)
        headers = {"Authorization": f"Bearer {token.read_text().strip()}"}
        for line in lines:
            request = orjson.loads(line)
            request.pop("idempotencyKey", None)
            answer = httpx.post(gateway.url + "/v1/sessions.import", json=request, headers=headers)
            assert answer.status_code == 200, answer.text
    finally:
        gateway.stop()
    assert leaked(written_bytes(str(gateway_store)), secrets) == []
    conn = sqlite3.connect(gateway_store)
    counted = [orjson.loads(r) for (r,) in conn.execute("SELECT redactions FROM import_runs") if r]
    conn.close()
    assert counted and sum(sum(c.values()) for c in counted) >= 100
