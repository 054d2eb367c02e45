"""Search by meaning from every front end, on the default model (WordLlama, from its wheel):
the sync embeds what it imported, `search` chooses hybrid where the ledger has vectors,
`index embeddings` and `doctor` say what is held, the gateway embeds what is pushed and
searches by meaning, MCP's search takes a mode. And the trust rule: the model a ledger records
never picks what a search runs or reaches."""

from __future__ import annotations

import http.server
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.pipeline.helpers import make_home
from tracehouse.cli.app import app
from tracehouse.gateway.app import GatewayConfig, create_app
from tracehouse.gateway.deps import COOKIE
from tracehouse.gateway.tokens import add_token
from tracehouse.mcp_server import tools
from tracehouse.search.embedders import Lazy
from tracehouse.store import open_store

runner = CliRunner()
PARAPHRASE = "the crash when dividing by zero"  # the fixture session says ZeroDivisionError


def run(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    ledger = tmp_path / "ledger.db"
    result = run("sync", "backfill", "--home", make_home(tmp_path), "--store", ledger)
    assert result.exit_code == 0, result.output
    assert "rows embedded for search by meaning" in result.stdout
    return ledger


def test_the_sync_embeds_and_search_chooses_hybrid(ledger: Path) -> None:
    lexical = json.loads(
        run("search", PARAPHRASE, "--json", "--mode", "lexical", "--store", ledger).stdout
    )
    assert lexical["hits"] == []  # no message holds all those words
    found = json.loads(run("search", PARAPHRASE, "--json", "--store", ledger).stdout)
    assert found["mode"] == "hybrid" and found["hits"]
    assert any("ZeroDivisionError" in h["snippet"] or "division" in h["snippet"].lower()
               for h in found["hits"][:5])  # fmt: skip
    only = json.loads(run("search", PARAPHRASE, "--json", "--mode", "semantic", "--type", "user",
                          "--store", ledger).stdout)  # fmt: skip
    assert only["hits"] and {h["kind"] for h in only["hits"]} == {"user"}


def test_index_embeddings_and_doctor_say_what_is_held(ledger: Path, tmp_path: Path) -> None:
    status = json.loads(run("index", "embeddings", "--json", "--store", ledger).stdout)
    assert status["embeddedRows"] == 0 and status["backlog"] == 0
    assert status["model"] == "wordllama:l2_supercat_256" and status["vectors"] > 0
    again = json.loads(run("index", "embeddings", "--again", "--json", "--store", ledger).stdout)
    assert again["embeddedRows"] > 0 and again["vectors"] == status["vectors"]
    doctor = json.loads(
        run("doctor", "--json", "--home", tmp_path / "home", "--store", ledger).stdout
    )
    (check,) = [c for c in doctor["checks"] if c["check"] == "search by meaning"]
    assert check["status"] == "ok" and "wordllama" in check["detail"]


def test_with_embeddings_off_search_is_lexical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEHOUSE_EMBEDDINGS", "none")
    ledger = tmp_path / "ledger.db"
    synced = run("sync", "backfill", "--home", make_home(tmp_path), "--store", ledger)
    assert synced.exit_code == 0 and "vectors" not in synced.stdout
    found = json.loads(run("search", "division", "--json", "--store", ledger).stdout)
    assert found["mode"] == "lexical" and found["hits"]
    refused = run("search", "division", "--mode", "semantic", "--store", ledger)
    assert refused.exit_code != 0 and "search by meaning is off" in refused.stderr


def test_bad_modes_and_models_are_refused_where_they_enter(ledger: Path) -> None:
    bad = run("search", "x", "--mode", "fuzzy", "--store", ledger)
    assert bad.exit_code == 2 and "--mode" in bad.stderr
    model = run("index", "embeddings", "--model", "bert", "--store", ledger)
    assert model.exit_code != 0 and "setting `embeddings`" in model.stderr


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests = 0

    def do_POST(self) -> None:
        type(self).requests += 1
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_the_model_a_ledger_records_picks_no_url(ledger: Path) -> None:
    """A ledger from elsewhere whose vectors say they came from an endpoint: a search embeds
    with the model of this machine's settings, never sends the query to that endpoint, and
    says why it searched by words only."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    planted = f"openai:leak@http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        with sqlite3.connect(ledger) as conn:
            conn.execute("UPDATE embedding_state SET model = ?", (planted,))
        found = run("search", PARAPHRASE, "--json", "--store", ledger)
        assert json.loads(found.stdout)["mode"] == "lexical"
        noted = run("search", "division", "--store", ledger)
        assert f"made by {planted}" in noted.stderr
        refused = run("search", PARAPHRASE, "--mode", "semantic", "--store", ledger)
        assert refused.exit_code != 0 and "index embeddings" in refused.stderr
        assert _Recorder.requests == 0
    finally:
        server.shutdown()


def test_mcp_search_takes_a_mode(ledger: Path) -> None:
    store = open_store(ledger)
    try:
        model = Lazy("wordllama")
        text = tools.search(store, PARAPHRASE, mode="semantic", embeddings=model)
        assert "best first" in text and "read_session" in text
        words = tools.search(store, PARAPHRASE, mode="lexical", embeddings=model)
        assert words.startswith("No hits")
    finally:
        store.close()


def test_the_gateway_embeds_pushes_and_searches_by_meaning(tmp_path: Path) -> None:
    path = str(tmp_path / "gateway.db")
    store = open_store(path)
    tokens = {s: add_token(store, s, s) for s in ("push", "read")}
    store.close()
    request = (Path(__file__).parents[1] / "data" / "draft_request.json").read_bytes()
    with TestClient(create_app(GatewayConfig(path, embeddings="wordllama"))) as client:
        pushed = client.post("/v1/sessions.import", content=request,
                             headers={"Authorization": f"Bearer {tokens['push']}",
                                      "Content-Type": "application/json"})  # fmt: skip
        assert pushed.status_code == 200, pushed.text
        assert client.app.state.embedding.wait()  # type: ignore[attr-defined]
        read = {"Authorization": f"Bearer {tokens['read']}"}
        found = client.get("/v1/search", params={"q": "a test that relies on ordering",
                                                 "mode": "semantic"}, headers=read)  # fmt: skip
        assert found.status_code == 200, found.text
        body = found.json()
        assert body["mode"] == "semantic"
        assert "dict order" in body["hits"][0]["snippet"]
        assert client.get("/v1/search", params={"q": "x", "mode": "fuzzy"},
                          headers=read).status_code == 422  # fmt: skip
        client.cookies.set(COOKIE, tokens["read"])
        page = client.get("/", params={"q": "a test that relies on ordering", "mode": "semantic"})
        assert page.status_code == 200 and "dict order" in page.text
        assert '<option value="semantic" selected>' in page.text
