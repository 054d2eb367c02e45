"""The gateway's OpenAPI document, which is its HTTP contract (schemathesis tests against it).

`sessions.import`'s request and response are the published JSON Schema (`model/contract_schema`),
moved under `components/schemas` so OpenAPI's references resolve; the push extensions a sync
adds are declared beside them. The small bodies of the push routes are pydantic models, and
every answer, errors included, has a declared schema.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from tracehouse.model import wire
from tracehouse.model.contract import MODES
from tracehouse.model.contract_schema import contract_schema
from tracehouse.model.fields import MAX_COUNT

_REF = "#/components/schemas/"
_PUSH_NOTE = "Push extension: accepted with the X-Tracehouse-Machine header (a sync's push)."


class _Body(BaseModel):
    # strict: `false` is not a count and "5" is not a number, as the document says
    model_config = ConfigDict(extra="forbid", strict=True)


class CursorsRequest(_Body):
    sourceProvider: str = Field(min_length=1, max_length=64)
    unitKeys: list[str] | None = Field(default=None, max_length=100_000)
    states: bool = False


class MissingRequest(_Body):
    sourceProvider: str = Field(min_length=1, max_length=64)
    unitKeys: list[str] = Field(max_length=100_000)
    at: str = Field(min_length=1, max_length=64)
    runId: str = Field(min_length=1, max_length=200)


class RejectsRequest(_Body):
    sourceProvider: str = Field(min_length=1, max_length=64)
    location: str = Field(min_length=1, max_length=200)


class MoveRequest(_Body):
    fromMachine: str = Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")
    toMachine: str = Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")


class RunStart(_Body):
    runId: str = Field(min_length=1, max_length=200)
    mode: str = Field(pattern="^(" + "|".join(MODES) + ")$")


Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]  # what a ledger's integer column holds


class RunFinish(_Body):
    bytesRead: Count = 0
    rejects: Count = 0
    dedupeHits: Count = 0
    retryReasons: dict[str, Count] = Field(default_factory=dict, max_length=1000)
    tailLagMs: Count | None = None
    tailLagP50Ms: Count | None = None
    error: str | None = Field(default=None, max_length=10_000)
    redactions: dict[str, Count] = Field(default_factory=dict, max_length=1000)


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or []}


_STR, _INT, _BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
_NULL_STR = {"type": ["string", "null"]}
_SUMMARY = _object(
    {
        "label": _STR, "sessionId": _STR, "sourceProvider": _STR, "sourceSessionId": _STR,
        "title": _NULL_STR, "project": _NULL_STR, "workspacePath": _NULL_STR, "model": _NULL_STR,
        "createdAt": _NULL_STR, "updatedAt": _NULL_STR, "isSubagent": _BOOL,
        "taskDescription": _NULL_STR, "turnCount": {"type": ["integer", "null"]},
        "messageCount": {"type": ["integer", "null"]},
        "toolCallCount": {"type": ["integer", "null"]},
        "totalTokens": {"type": ["integer", "null"]}, "host": _NULL_STR,
        "firstImportedAt": _NULL_STR, "lastImportedAt": _NULL_STR, "sourceMissingAt": _NULL_STR,
        "fingerprint": _STR,
    },
    ["label", "sessionId", "sourceProvider", "sourceSessionId"],
)  # fmt: skip

RESPONSES: dict[str, dict[str, Any]] = {
    "Error": _object({"detail": {}}, ["detail"]),
    "Health": _object(
        {
            "ok": _BOOL,
            "version": _STR,
            "backend": _STR,
            "schemaVersion": _INT,
            "maxRequestBytes": _INT,
        },
        ["ok", "schemaVersion", "maxRequestBytes"],
    ),
    "Cursors": _object({"cursors": {"type": "object"}}, ["cursors"]),
    "Flagged": _object({"flagged": _INT}, ["flagged"]),
    "Moved": _object({"moved": _INT}, ["moved"]),
    "Whoami": _object(
        {"name": _STR, "scope": _STR, "machine": _NULL_STR, "unredacted": _BOOL},
        ["name", "scope", "machine", "unredacted"],
    ),
    "UnitKeys": _object({"unitKeys": {"type": "array", "items": _STR}}, ["unitKeys"]),
    "Done": _object({"ok": _BOOL}, ["ok"]),
    "SessionSummary": _SUMMARY,
    "SessionList": _object(
        {"sessions": {"type": "array", "items": {"$ref": _REF + "SessionSummary"}}}, ["sessions"]
    ),
    "Session": {
        "allOf": [{"$ref": _REF + "SessionSummary"}],
        "type": "object",
        "properties": {
            "item": {"oneOf": [{"$ref": _REF + "ImportItem"}, {"type": "null"}]},
            "itemProblem": _NULL_STR,
            "lineage": _object(
                {"parent": _NULL_STR, "children": {"type": "array", "items": _STR}},
                ["parent", "children"],
            ),
        },
        "required": ["item", "lineage"],
    },
    "Transcript": {
        "allOf": [{"$ref": _REF + "SessionSummary"}],
        "type": "object",
        "properties": {
            "format": {"type": "string", "enum": ["text", "markdown"]},
            "text": _STR,
            "parent": {"oneOf": [{"$ref": _REF + "SessionSummary"}, {"type": "null"}]},
            "children": {"type": "array", "items": {"$ref": _REF + "SessionSummary"}},
        },
        "required": ["format", "text", "parent", "children"],
    },
    "Usage": _object(
        {
            "period": _STR,
            "timeZone": _STR,
            "prices": _STR,
            "unpricedModels": {"type": "array", "items": {"type": "object"}},
            "rows": {"type": "array", "items": {"type": "object"}},
            "total": {"type": "object"},
        },
        ["period", "rows", "total"],
    ),
    "UsageBlocks": _object(
        {"prices": _STR, "blocks": {"type": "array", "items": {"type": "object"}}},
        ["prices", "blocks"],
    ),
    "UsageLimits": _object(
        {"prices": _STR, "limits": {"type": "array", "items": {"type": "object"}}},
        ["prices", "limits"],
    ),
    "SearchHits": _object(
        {
            "query": _STR,
            "mode": {"type": "string", "enum": ["lexical", "semantic", "hybrid"]},
            "hits": {"type": "array", "items": {"type": "object"}},
        },
        ["query", "mode", "hits"],
    ),
}
_STATUS = {
    400: "The request is malformed; `detail` names the field.",
    401: "No token, or one the gateway does not know.",
    403: "The token's scope does not allow this.",
    404: "No such session (a label, id or source id; `--session` of a search too).",
    409: "The idempotency key was used before with another request.",
    413: "The request is over the gateway's limit (GET /v1/health says it).",
    503: "The store is busy or unreachable: try again (Retry-After).",
}


def responses(ok: str, *errors: int) -> dict[int | str, dict[str, Any]]:
    out: dict[int | str, dict[str, Any]] = {
        200: {"description": "OK", "content": {"application/json": {"schema": {"$ref": _REF + ok}}}}
    }
    for status in errors:
        out[status] = {
            "description": _STATUS[status],
            "content": {"application/json": {"schema": {"$ref": _REF + "Error"}}},
        }
    return out


def import_body() -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": _REF + "ImportRequest"}}},
        }
    }


def contract_components() -> dict[str, Any]:
    """The published request schema and its parts, as OpenAPI components (`Import*`)."""
    schema = contract_schema()
    defs = schema.pop("$defs")
    for key in ("$schema", "$id"):
        schema.pop(key, None)
    names = {name: "Import" + name[0].upper() + name[1:] for name in defs}
    for extension in ("cursors", "rejects", "clears"):
        schema["properties"][extension] = {
            "type": "array",
            "items": {"type": "object"},
            "description": _PUSH_NOTE,
        }
    item = defs["item"]
    item["properties"]["cursors"] = {
        "type": "array",
        "items": {"type": "object"},
        "description": _PUSH_NOTE,
    }
    for row in ("turn", "message", "toolCall", "source"):
        defs[row]["properties"][wire.LEDGER_LINKS] = {
            "type": "object",
            "additionalProperties": {
                "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
            },
            "description": _PUSH_NOTE + " Link field name → the ledger id of a row of the same"
            " session pushed before, where the pusher no longer holds its source id.",
        }
    components = {"ImportRequest": schema, **{names[k]: v for k, v in defs.items()}}
    refs = {f"#/$defs/{k}": _REF + v for k, v in names.items()}
    rewritten: dict[str, Any] = _rewrite(components, refs)
    return rewritten


def _rewrite(value: Any, refs: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: (refs.get(v, v) if k == "$ref" else _rewrite(v, refs)) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, refs) for v in value]
    return value


def install(app: Any) -> None:
    """Add the components to the document FastAPI builds from the routes, once."""
    build = app.openapi

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = build()
            schemas = doc.setdefault("components", {}).setdefault("schemas", {})
            schemas.update(contract_components())
            schemas.update(RESPONSES)
            doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
            doc["security"] = [{"bearer": []}]
            doc["paths"]["/v1/health"]["get"]["security"] = []  # the one route without a token
            app.openapi_schema = doc
        return dict(app.openapi_schema)

    app.openapi = document
