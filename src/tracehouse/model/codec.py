"""The JSON form of the import contract: `sessions.import` requests in camelCase (DESIGN §4).

Decoding validates every item on its own. An invalid item becomes a `failed` result whose reason
names the item and the field; only an envelope that cannot be read refuses the whole request.
Ids and fingerprints a producer leaves out are derived here exactly as the parsers derive them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from tracehouse.errors import RequestError, ValidationError
from tracehouse.model import ids
from tracehouse.model.contract import (
    MODES,
    ImportBatch,
    ImportItem,
    ItemResult,
    WatermarkUpdate,
    new_run_id,
)
from tracehouse.model.fingerprint import canonical_json, combine, fingerprint_of
from tracehouse.model.rows import row_fingerprint, to_frame
from tracehouse.model.tables import CONTENT_TABLES, SESSIONS, Kind, Table, camel

_ENVELOPE_KEYS = {"source", "runId", "mode", "idempotencyKey", "items"}
_ITEM_KEYS = {
    "sourceProvider",
    "sourceSessionId",
    "sourceSessionFingerprint",
    "importedAtMs",
    "session",
    "watermarks",
    *CONTENT_TABLES,
}
_CAMEL: dict[str, dict[str, str]] = {
    t.name: {camel(c.name): c.name for c in t.columns} for t in (SESSIONS, *CONTENT_TABLES.values())
}
# Columns a producer may omit because they are derived from others.
_DERIVED = {"session_id", "message_id", "turn_id", "tool_call_id", "source_id", "message_type"}
_DEFAULT_TYPE = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool_result",
}


def decode_request(data: bytes | str) -> ImportBatch:
    try:
        request = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise RequestError(f"request is not valid JSON: {exc}") from None
    if not isinstance(request, dict):
        raise RequestError("request must be a JSON object with an `items` list")
    unknown = sorted(set(request) - _ENVELOPE_KEYS)
    if unknown:
        raise RequestError(f"unknown field `{unknown[0]}` in the request envelope")
    items = request.get("items")
    if not isinstance(items, list) or not items:
        raise RequestError("request has no items: `items` must be a non-empty list")
    mode = request.get("mode", "import")
    if mode not in MODES:
        raise RequestError(f"`mode` must be one of {', '.join(MODES)}, not {mode!r}")
    for key in ("source", "runId", "idempotencyKey"):
        if request.get(key) is not None and not isinstance(request[key], str):
            raise RequestError(f"`{key}` must be a string")

    decoded: list[ImportItem] = []
    invalid: list[ItemResult] = []
    rows: dict[str, list[dict[str, Any]]] = {t.name: [] for t in CONTENT_TABLES.values()}
    for index, raw in enumerate(items):
        try:
            item, item_rows = _decode_item(raw)
        except ValidationError as exc:
            provider, source_id = _names(raw)
            invalid.append(
                ItemResult(provider, source_id, None, "failed", f"items[{index}]: {exc}")
            )
            continue
        decoded.append(item)
        for table, table_rows in item_rows.items():
            rows[table].extend(table_rows)

    frames = {t.name: to_frame(t, rows[t.name]) for t in CONTENT_TABLES.values()}
    return ImportBatch(
        items=tuple(decoded),
        frames=frames,
        source=request.get("source") or "import",
        run_id=request.get("runId") or new_run_id(),
        mode=mode,
        idempotency_key=request.get("idempotencyKey"),
        invalid=tuple(invalid),
        request_hash=fingerprint_of(request),
    )


def _names(raw: Any) -> tuple[str, str]:
    if isinstance(raw, dict):
        return str(raw.get("sourceProvider", "?")), str(raw.get("sourceSessionId", "?"))
    return "?", "?"


def _decode_item(raw: Any) -> tuple[ImportItem, dict[str, list[dict[str, Any]]]]:
    if not isinstance(raw, dict):
        raise ValidationError("an item must be a JSON object")
    unknown = sorted(set(raw) - _ITEM_KEYS)
    if unknown:
        raise ValidationError(f"unknown field `{unknown[0]}`")
    provider = _required_str(raw, "sourceProvider")
    source_session_id = _required_str(raw, "sourceSessionId")
    session_id = ids.session_id(provider, source_session_id)

    session = _decode_row(SESSIONS, raw.get("session") or {}, "session")
    for column, expected in (
        ("source_provider", provider),
        ("source_session_id", source_session_id),
        ("session_id", session_id),
    ):
        if session.get(column) not in (None, expected):
            raise ValidationError(f"session.{camel(column)}: {session[column]!r} != {expected!r}")
        session[column] = expected
    session.setdefault("label", None)
    session["label"] = session["label"] or ids.session_label(provider, source_session_id)

    item_rows: dict[str, list[dict[str, Any]]] = {}
    fingerprints: list[str] = []
    for key, table in CONTENT_TABLES.items():
        values = raw.get(key, [])
        if not isinstance(values, list):
            raise ValidationError(f"`{key}` must be a list")
        decoded_rows = []
        for index, value in enumerate(values):
            where = f"{key}[{index}]"
            row = _decode_row(table, value, where)
            _derive_ids(table, row, provider, source_session_id, session_id, where)
            _check_required(table, row, where)
            row["fingerprint"] = row_fingerprint(table, row)
            fingerprints.append(row["fingerprint"])
            decoded_rows.append(row)
        item_rows[table.name] = decoded_rows

    fingerprint = raw.get("sourceSessionFingerprint")
    if fingerprint is None:
        fingerprint = combine([row_fingerprint(SESSIONS, session), *fingerprints])
    elif not isinstance(fingerprint, str):
        raise ValidationError("sourceSessionFingerprint: expected a string")
    session["fingerprint"] = fingerprint
    imported_at = raw.get("importedAtMs", 0)
    if not isinstance(imported_at, int) or isinstance(imported_at, bool):
        raise ValidationError("importedAtMs: expected an integer")
    item = ImportItem(
        source_provider=provider,
        source_session_id=source_session_id,
        fingerprint=fingerprint,
        imported_at_ms=imported_at,
        session=session,
        watermarks=_decode_watermarks(raw.get("watermarks", [])),
    )
    return item, item_rows


def _required_str(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise ValidationError(f"{key}: required, a non-empty string")
    return value


def _decode_row(table: Table, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationError(f"{where}: expected an object")
    names = _CAMEL[table.name]
    row: dict[str, Any] = {}
    for key, field_value in value.items():
        column_name = names.get(key)
        if column_name is None or column_name == "fingerprint":
            raise ValidationError(f"{where}.{key}: unknown field")
        column = table.column(column_name)
        row[column_name] = _convert(column.kind, field_value, f"{where}.{key}")
        if (
            column.choices
            and row[column_name] is not None
            and row[column_name] not in column.choices
        ):
            raise ValidationError(
                f"{where}.{key}: unknown {column_name} {row[column_name]!r}"
                f" (one of {', '.join(column.choices)})"
            )
    return row


def _convert(kind: Kind, value: Any, where: str) -> Any:
    if value is None:
        return None
    if kind is Kind.JSON:
        return canonical_json(value).decode()
    ok = {
        Kind.TEXT: isinstance(value, str),
        Kind.INT: isinstance(value, int) and not isinstance(value, bool),
        Kind.BOOL: isinstance(value, bool),
    }[kind]
    if not ok:
        expected = {Kind.TEXT: "a string", Kind.INT: "an integer", Kind.BOOL: "a boolean"}[kind]
        raise ValidationError(f"{where}: expected {expected}, got {type(value).__name__}")
    return value


def _derive_ids(
    table: Table,
    row: dict[str, Any],
    provider: str,
    source_session_id: str,
    session_id: str,
    where: str,
) -> None:
    if row.get("session_id") not in (None, session_id):
        raise ValidationError(f"{where}.sessionId: belongs to another session")
    row["session_id"] = session_id
    derive = {
        "messages": ("message_id", "source_message_id", ids.message_id),
        "turns": ("turn_id", "source_turn_id", ids.turn_id),
        "tool_calls": ("tool_call_id", "source_tool_call_id", ids.tool_call_id),
    }.get(table.name)
    if derive is not None:
        id_column, source_column, make = derive
        if row.get(id_column) is None:
            if row.get(source_column) is None:
                raise ValidationError(
                    f"{where}: one of {camel(id_column)} or {camel(source_column)} is required"
                )
            row[id_column] = make(provider, source_session_id, row[source_column])
    if table.name == "messages" and row.get("message_type") is None and row.get("role"):
        row["message_type"] = _DEFAULT_TYPE[row["role"]]
    if table.name == "message_sources" and row.get("source_id") is None:
        if not row.get("uri") or not row.get("source_type"):
            raise ValidationError(f"{where}: sourceId, or sourceType and uri, are required")
        row["source_id"] = ids.source_id(row["source_type"], row["uri"])


def _check_required(table: Table, row: dict[str, Any], where: str) -> None:
    for column in table.columns:
        if column.required and row.get(column.name) is None:
            name = camel(column.name)
            hint = "" if column.name in _DERIVED else " (required)"
            raise ValidationError(f"{where}.{name}: missing{hint}")


def _decode_watermarks(value: Any) -> tuple[WatermarkUpdate, ...]:
    if not isinstance(value, list):
        raise ValidationError("watermarks: expected a list")
    out = []
    for index, wm in enumerate(value):
        if not isinstance(wm, dict) or not isinstance(wm.get("cursor", {}), dict):
            raise ValidationError(
                f"watermarks[{index}]: expected {{sourceProvider, unitKey, cursor}}"
            )
        out.append(
            WatermarkUpdate(
                _required_str(wm, "sourceProvider"),
                _required_str(wm, "unitKey"),
                wm.get("cursor", {}),
            )
        )
    return tuple(out)
