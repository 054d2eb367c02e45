"""The published JSON Schema of `sessions.import` (`docs/sessions-import.schema.json`): current
with `model/wire.py`, and true of the README's examples, the test requests, what the export
writes and what the store answers."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from tests.conftest import DATA
from tests.store.factory import batch, item
from tracehouse.exports.documents import DocumentOptions, export_documents
from tracehouse.model.codec import decode_request
from tracehouse.model.contract_schema import contract_schema
from tracehouse.model.wire import ROWS, SESSION
from tracehouse.reports.filters import SessionFilters

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs" / "sessions-import.schema.json"
SCHEMA = json.loads(SCHEMA_FILE.read_text())
REQUEST = jsonschema.Draft202012Validator(SCHEMA)
RESPONSE = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/response"})
# A JSON block in the README preceded by `<!-- sessions.import request -->` (or response).
EXAMPLE = re.compile(r"<!-- sessions\.import (request|response) -->\s*```json\n(.*?)```", re.S)


def valid(validator: jsonschema.Draft202012Validator, document: Any) -> None:
    errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, errors[:5]


def test_the_schema_file_is_generated_from_the_field_declarations() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    regenerate = "python -m tracehouse.model.contract_schema > docs/sessions-import.schema.json"
    assert contract_schema() == SCHEMA, f"stale: {regenerate}"
    fields = [*SESSION, *(f for _, fs in ROWS.values() for f in fs)]
    draft_fields = sum(f.draft for f in fields)
    assert draft_fields == 51  # every row field of the draft, none refused


def test_the_docs_page_lists_every_field() -> None:
    from tracehouse.model.contract_schema import field_tables

    page = (ROOT / "docs" / "sessions-import.md").read_text()
    assert field_tables() in page, (
        "stale: the tables of `uv run python -m tracehouse.model.contract_schema --fields`"
    )


def test_the_import_page_examples_validate_and_the_request_imports(store) -> None:  # type: ignore[no-untyped-def]
    examples = EXAMPLE.findall((ROOT / "docs" / "import.md").read_text())
    kinds = [kind for kind, _ in examples]
    assert "request" in kinds and "response" in kinds
    for kind, text in examples:
        document = json.loads(text)
        valid(REQUEST if kind == "request" else RESPONSE, document)
        if kind == "request":
            response = store.import_batch(decode_request(text))
            assert response.ok, [r.reason for r in response.results]
            valid(RESPONSE, response.to_json())


@pytest.mark.parametrize("name", ["request.json", "draft_request.json"])
def test_the_test_requests_validate(name: str) -> None:
    valid(REQUEST, json.loads((DATA / name).read_text()))


def test_what_the_export_writes_validates_and_a_failed_response_too(store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    draft = json.loads((DATA / "draft_request.json").read_text())
    store.import_batch(decode_request(orjson.dumps(draft)))
    stream = io.BytesIO()
    export_documents(store, tmp_path, DocumentOptions("sessions-import"), SessionFilters(), stream)
    for line in stream.getvalue().splitlines():
        valid(REQUEST, orjson.loads(line))
    bad = item("bad")
    bad["messages"][0]["role"] = "robot"
    valid(RESPONSE, store.import_batch(batch([item("good"), bad])).to_json())
    invalid = json.loads((DATA / "request.json").read_text())
    invalid["items"][0]["messages"][0]["role"] = "robot"
    assert not REQUEST.is_valid(invalid)  # the schema refuses what the codec refuses
