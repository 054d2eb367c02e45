"""The JSON form of the import contract: `sessions.import` requests in camelCase (DESIGN §4).

Decoding validates every item on its own. An invalid item becomes a `failed` result whose reason
names the item and the field; only an envelope that cannot be read refuses the whole request.
Ids and fingerprints a producer leaves out are derived here exactly as the parsers derive them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import xxhash

from tracehouse.errors import RequestError, ValidationError
from tracehouse.model import ids
from tracehouse.model.contract import (
    MODES,
    ImportBatch,
    ImportItem,
    ItemResult,
    new_run_id,
)
from tracehouse.model.fields import MAX_COUNT, cap
from tracehouse.model.fingerprint import canonical_json, combine, fingerprint_of
from tracehouse.model.rows import row_fingerprint, to_frame
from tracehouse.model.tables import CONTENT_TABLES, PROVIDERS, SESSIONS, Kind, Table, camel

# The largest text a field keeps (DESIGN §9): longer text is cut with a marker, as parsers do.
MAX_FIELD = 1024 * 1024

_ENVELOPE_KEYS = {"source", "runId", "mode", "idempotencyKey", "items"}
_ITEM_KEYS = {
    "sourceProvider",
    "sourceSessionId",
    "sourceSessionFingerprint",
    "importedAtMs",
    "session",
    *CONTENT_TABLES,
}
# What an item may not say: cursors belong to tracehouse's own sync (a planted one would hide a
# real file from every later backfill), and the ledger's ids are derived from source ids, so an
# item can only ever write its own session's rows.
_REFUSED = {
    "watermarks": "cursors are kept by tracehouse's own sync; a request cannot set them",
}
_ID_COLUMNS = {
    "messages": ("message_id", "source_message_id", ids.message_id),
    "turns": ("turn_id", "source_turn_id", ids.turn_id),
    "tool_calls": ("tool_call_id", "source_tool_call_id", ids.tool_call_id),
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
        request_hash=_request_hash(request, data),
    )


def _request_hash(request: Any, data: bytes | str) -> str:
    """Canonical, so key order does not matter; the raw bytes when a value nests too deep for
    canonical JSON (that item is refused anyway, and a repeat is still the same bytes)."""
    try:
        return fingerprint_of(request)
    except TypeError:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        return "raw:" + xxhash.xxh3_128_hexdigest(raw)


def _names(raw: Any) -> tuple[str, str]:
    if isinstance(raw, dict):
        return str(raw.get("sourceProvider", "?")), str(raw.get("sourceSessionId", "?"))
    return "?", "?"


def _decode_item(raw: Any) -> tuple[ImportItem, dict[str, list[dict[str, Any]]]]:
    if not isinstance(raw, dict):
        raise ValidationError("an item must be a JSON object")
    for key, why in _REFUSED.items():
        if key in raw:
            raise ValidationError(f"{key}: {why}")
    unknown = sorted(set(raw) - _ITEM_KEYS)
    if unknown:
        raise ValidationError(f"unknown field `{unknown[0]}`")
    provider = _required_str(raw, "sourceProvider")
    if provider not in PROVIDERS:
        raise ValidationError(
            f"sourceProvider: unknown provider {provider!r} (one of {', '.join(PROVIDERS)})"
        )
    source_session_id = _required_str(raw, "sourceSessionId")
    session_id = ids.session_id(provider, source_session_id)

    session = _decode_row(SESSIONS, raw.get("session", {}), "session")
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
    own_messages = {row["message_id"] for row in item_rows.get("messages", [])}
    for index, row in enumerate(item_rows.get("message_sources", [])):
        if row["message_id"] not in own_messages:  # a source may not attach to another session
            raise ValidationError(f"sources[{index}].messageId: not a message of this item")

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
        try:
            text = canonical_json(value).decode()
        except (TypeError, ValueError) as exc:  # nested past what any JSON writer can hold
            raise ValidationError(f"{where}: cannot be stored as JSON ({exc})") from None
        if len(text) > MAX_FIELD:
            raise ValidationError(f"{where}: {len(text)} bytes of JSON, over the {MAX_FIELD} cap")
        return text
    if kind is Kind.TEXT and isinstance(value, str):
        return cap(value, MAX_FIELD)
    if kind is Kind.INT and isinstance(value, int) and not 0 <= value <= MAX_COUNT:
        raise ValidationError(f"{where}: {value} is out of range (0 … 2^53-1)")
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
    derive = _ID_COLUMNS.get(table.name)
    if derive is not None:
        id_column, source_column, make = derive
        if row.get(source_column) is None:
            raise ValidationError(f"{where}.{camel(source_column)}: missing (required)")
        own = make(provider, source_session_id, row[source_column])
        if row.get(id_column) not in (None, own):
            raise ValidationError(
                f"{where}.{camel(id_column)}: not this session's id for"
                f" {camel(source_column)} {row[source_column]!r} (leave it out: it is derived)"
            )
        row[id_column] = own
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
