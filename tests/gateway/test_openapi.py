"""The OpenAPI document the gateway serves is its contract: schemathesis generates requests from
it (bounded) and every answer must be no 5xx, a declared status, and match its schema. Run with a
push token and with a read token, so both the refusals and the real work are exercised."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.generation import GenerationMode

from tests.conftest import DATA
from tracehouse.gateway.app import GatewayConfig, create_app
from tracehouse.gateway.tokens import add_token
from tracehouse.store import open_store

pytestmark = pytest.mark.slow


def serve_for_tests() -> tuple[Any, dict[str, str]]:
    """A gateway over a fresh ledger holding the draft's example (so reads find a session).
    Built at import: schemathesis reads the document when it collects the tests."""
    directory = tempfile.mkdtemp(prefix="tracehouse-openapi-")
    atexit.register(shutil.rmtree, directory, True)
    path = str(Path(directory) / "gateway.db")
    store = open_store(path)
    tokens = {
        "push": add_token(store, "laptop", "push"),
        "read": add_token(store, "viewer", "read"),
    }
    store.close()
    app = create_app(GatewayConfig(path, max_request_bytes=2_000_000))
    from fastapi.testclient import TestClient

    TestClient(app).post("/v1/sessions.import", content=(DATA / "draft_request.json").read_bytes(),
                         headers={"Authorization": f"Bearer {tokens['push']}"})  # fmt: skip
    return app, tokens


SERVED = serve_for_tests()
schema = schemathesis.openapi.from_asgi("/openapi.json", SERVED[0])
# Requests outside the document too: each must be refused with a 4xx, never accepted or a 5xx.
schema.config.generation.update(modes=list(GenerationMode))


@pytest.fixture
def served() -> tuple[Any, dict[str, str]]:
    return SERVED


def refused_unless_applied(ctx: Any, response: Any, case: Any) -> bool | None:
    """A request outside the document must be refused. `sessions.import` refuses a bad item
    alone, with HTTP 200 and the item `failed`, and applies the others (the contract): there,
    a request outside the document must have an item refused."""
    if case.path == "/v1/sessions.import" and response.status_code == 200:
        results = response.json().get("results") or []
        if any(r["status"] == "failed" for r in results):
            return None
    if _headers_replaced(case):
        return None
    return negative_data_rejection(ctx, response, case)


def _headers_replaced(case: Any) -> bool:
    """A case whose generated headers are out of the document: the test sends its own token in
    their place, so what reached the gateway is not what was generated (a query value that is a
    valid string once serialized, beside it, was taken as the invalid part)."""
    meta = getattr(case, "meta", None)
    components = getattr(meta, "components", None) or {}
    return any(getattr(location, "name", "") == "HEADER" and component.mode.is_negative
               for location, component in components.items())  # fmt: skip


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance, refused_unless_applied]  # fmt: skip


def call(case: Any, served: Any, scope: str) -> None:
    # No machine header: the token names its machine, and the generated headers are sent as
    # they are (an invalid one must be refused).
    case.call_and_validate(headers={"Authorization": f"Bearer {served[1][scope]}"}, checks=CHECKS)


BOUNDED = settings(
    max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)  # the same cases every run: CI is not a lottery


@schema.parametrize()
@BOUNDED
def test_every_answer_to_a_push_token_matches_the_document(case: Any, served: Any) -> None:
    call(case, served, "push")


@schema.parametrize()
@BOUNDED
def test_every_answer_to_a_read_token_matches_the_document(case: Any, served: Any) -> None:
    call(case, served, "read")


def test_the_document_names_the_contract(served: Any) -> None:
    from fastapi.testclient import TestClient

    document = TestClient(served[0]).get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    assert {"ImportRequest", "ImportItem", "ImportResponse", "ImportMessage"} <= set(schemas)
    body = document["paths"]["/v1/sessions.import"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["$ref"].endswith("/ImportRequest")
    assert "/v1/health" in document["paths"] and "/login" not in document["paths"]
