"""The `sessions.import` request and response as JSON Schema, generated from `model/wire.py`.

    uv run python -m tracehouse.model.contract_schema > docs/sessions-import.schema.json
    uv run python -m tracehouse.model.contract_schema --fields   # the tables of the docs page

Published for producers (another tool, a pusher, a gateway client) to validate against before
they send. A test checks the file is current and that the README's examples validate.
"""

from __future__ import annotations

from typing import Any

import orjson

from tracehouse.model import wire
from tracehouse.model.columns import Kind, Table
from tracehouse.model.contract import MODES
from tracehouse.model.fields import MAX_COUNT
from tracehouse.model.schema_doc import COLUMN_DOCS
from tracehouse.model.tables import PROVIDERS, TABLES_BY_NAME

SCHEMA_ID = "https://tracehouse.dev/schemas/sessions-import.schema.json"
_COUNT = {"type": "integer", "minimum": 0, "maximum": MAX_COUNT}
_TIME = {"type": "integer", "minimum": 0, "maximum": wire.MAX_MS,
         "description": "Epoch milliseconds (UTC)."}  # fmt: skip
_ROW_DEFS = {"turns": "turn", "messages": "message", "toolCalls": "toolCall", "sources": "source"}


def contract_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {
        "session": _object(TABLES_BY_NAME["sessions"], wire.SESSION, ()),
        "item": _item(),
        "response": _response(),
    }
    for key, (table, fields) in wire.ROWS.items():
        defs[_ROW_DEFS[key]] = _object(TABLES_BY_NAME[table], fields, wire.REQUIRED[key])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "sessions.import request",
        "description": "A batch of agent sessions for `tracehouse import` or a gateway's"
        " POST /v1/sessions.import. Links name rows by their source ids within the item's"
        " provider; every ledger id is derived by the store. Fields marked as extensions are"
        " tracehouse's own, beside the draft's. Null means absent. The response is"
        " `#/$defs/response`.",
        "type": "object",
        "required": ["items"],
        "additionalProperties": False,
        "properties": {
            "source": {"type": "string", "description": "Who sends the batch."},
            "runId": {"type": "string", "description": "Correlates the batch with a run."},
            "mode": {
                "enum": list(MODES),
                "default": "import",
                "description": "backfill | tail (the draft's); live, import, migration"
                " (tracehouse's own).",
            },
            "idempotencyKey": {
                "type": "string",
                "description": "The same key with the same request returns the stored response"
                " and writes nothing; with a different request it is an error.",
            },
            "items": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/item"}},
        },
        "$defs": defs,
    }


def _item() -> dict[str, Any]:
    properties: dict[str, Any] = {
        "sourceProvider": {"enum": list(PROVIDERS)},
        "sourceSessionId": {"type": "string", "minLength": 1},
        "sourceSessionFingerprint": {
            "type": "string",
            "description": "The producer's content hash: the same one again is `skipped`."
            " Computed from the rows when left out.",
        },
        "importedAtMs": _TIME,
        "session": {"$ref": "#/$defs/session"},
    }
    for key in wire.ROWS:
        properties[key] = {"type": "array", "items": {"$ref": f"#/$defs/{_ROW_DEFS[key]}"}}
    properties["sources"]["description"] = "Extension: cited sources (files, URLs, searches)."
    return {
        "type": "object",
        "required": ["sourceProvider", "sourceSessionId"],
        "additionalProperties": False,
        "properties": properties,
    }


def _object(
    table: Table, fields: tuple[wire.Field, ...], required: tuple[str, ...]
) -> dict[str, Any]:
    properties = {}
    for field in fields:
        spec = _field(table, field)
        doc = COLUMN_DOCS.get(table.name, {}).get(field.column)
        notes = [n for n in (doc, None if field.draft else "Extension.") if n]
        if notes and "description" not in spec:
            spec["description"] = " ".join(notes)
        elif not field.draft:
            spec["description"] = f"{spec['description']} Extension."
        properties[field.name] = spec
    return {
        "type": "object",
        "required": list(required),
        "additionalProperties": False,
        "properties": properties,
    }


def _field(table: Table, field: wire.Field) -> dict[str, Any]:
    if field.form == "time":
        return _nullable(dict(_TIME))
    if field.form in ("own", "link"):
        what = (
            "this row's own id in its source"
            if field.form == "own"
            else (f"the source id of a {field.target} of this session")
        )
        return _nullable({"type": "string", "minLength": 1, "description": f"{what.capitalize()}."})
    if field.form == "links":
        links = {"type": "array", "items": {"type": "string", "minLength": 1}}
        return _nullable(
            {**links, "description": f"Source ids of {field.target}s of this session."}
        )
    if field.form == "result":
        return {"description": "What the tool returned: text, or any JSON (kept as its text)."}
    column = table.column(field.column)
    if column.kind is Kind.JSON:
        return {"description": f"Any JSON. {COLUMN_DOCS.get(table.name, {}).get(column.name, '')}"
                .strip()}  # fmt: skip
    spec: dict[str, Any] = {"type": "string"}
    if column.kind is Kind.INT:
        spec = dict(_COUNT)
    elif column.kind is Kind.BOOL:
        spec = {"type": "boolean"}
    if column.choices:
        spec = {"enum": list(column.choices)}
    return _nullable(spec)


def _nullable(spec: dict[str, Any]) -> dict[str, Any]:
    if "enum" in spec:
        return {**spec, "enum": [*spec["enum"], None]}
    kinds = spec["type"]
    return {**spec, "type": [kinds, "null"]}


def _response() -> dict[str, Any]:
    count = dict(_COUNT)
    return {
        "type": "object",
        "required": ["ok", "runId", "imported", "upserted", "skipped", "failed", "results"],
        "additionalProperties": False,
        "properties": {
            "ok": {"type": "boolean", "description": "False when an item failed."},
            "replayed": {"type": "boolean", "description": "Extension: true when this is the"
                         " stored response to an idempotency key seen before."},
            "runId": {"type": "string"},
            "imported": count, "upserted": count, "skipped": count, "failed": count,
            "results": {
                "type": "array",
                "description": "One per item, in request order.",
                "items": {
                    "type": "object",
                    "required": ["sourceProvider", "sourceSessionId", "status"],
                    "additionalProperties": False,
                    "properties": {
                        "sourceProvider": {"type": "string"},
                        "sourceSessionId": {"type": "string"},
                        "sessionLabel": {"type": ["string", "null"]},
                        "status": {"enum": ["imported", "upserted", "skipped", "failed"]},
                        "reason": {"type": ["string", "null"],
                                   "description": "Why it failed, naming the field."},
                        "rowsWritten": {**count, "description": "Extension."},
                    },
                },
            },
        },
    }  # fmt: skip


_FORMS = {
    "time": "epoch ms",
    "own": "source id (the row's own)",
    "link": "source id of a {target}",
    "links": "source ids of {target}s",
    "result": "text or any JSON",
}


def field_tables() -> str:
    """The field tables of `docs/sessions-import.md`: every field, its ledger column, its form."""
    parts = []
    groups = [("session", "sessions", wire.SESSION)]
    groups += [(key, table, fields) for key, (table, fields) in wire.ROWS.items()]
    for key, table_name, fields in groups:
        table = TABLES_BY_NAME[table_name]
        required = set(wire.REQUIRED.get(key, ()))
        parts.append(f"### `{key}` → `{table_name}`\n")
        parts.append("| field | column | form | |")
        parts.append("|---|---|---|---|")
        for field in fields:
            form = _FORMS.get(field.form, "").format(target=field.target)
            if not form:
                form = table.column(field.column).kind.value
            notes = [
                "required" if field.name in required else "",
                "" if field.draft else "extension",
            ]
            note = ", ".join(n for n in notes if n)
            parts.append(f"| `{field.name}` | `{field.column}` | {form} | {note} |")
        parts.append("")
    return "\n".join(parts)


def main() -> None:
    import sys

    if sys.argv[1:] == ["--fields"]:
        print(field_tables(), end="")
        return
    print(orjson.dumps(contract_schema(), option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
