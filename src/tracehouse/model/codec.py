"""The JSON form of the import contract: `sessions.import` requests as the draft has them, with
tracehouse's documented extensions (DESIGN §4; the fields are declared in `model/wire.py`).

Decoding validates every item on its own. An invalid item becomes a `failed` result whose reason
names the item and the field; only an envelope that cannot be read refuses the whole request.
Every ledger id is derived here from source ids within the item's provider, so an item can only
write its own session's rows; row fingerprints are computed as the parsers compute them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson
import xxhash

from tracehouse.errors import RequestError, ValidationError
from tracehouse.model import ids, wire
from tracehouse.model.contract import (
    MODES,
    ImportBatch,
    ImportItem,
    ItemResult,
    new_run_id,
)
from tracehouse.model.fields import MAX_COUNT, cap
from tracehouse.model.fingerprint import canonical_json, combine, fingerprint_of
from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import CONTENT_TABLES, PROVIDERS, SESSIONS, TABLES_BY_NAME, Kind, Table

# The largest text a field keeps (DESIGN §9): longer text is cut with a marker, as parsers do.
MAX_FIELD = 1024 * 1024

_ENVELOPE_KEYS = {"source", "runId", "mode", "idempotencyKey", "items"}
_ITEM_KEYS = {
    "sourceProvider",
    "sourceSessionId",
    "sourceSessionFingerprint",
    "importedAtMs",
    "session",
    *wire.ROWS,
}
# What an item may not say: cursors belong to tracehouse's own sync (a planted one would hide a
# real file from every later backfill), and the ledger's ids are derived from source ids, so an
# item can only ever write its own session's rows.
_REFUSED = {
    "watermarks": "cursors are kept by tracehouse's own sync; a request cannot set them",
}
_OWN_ID = {"turns": ids.turn_id, "messages": ids.message_id, "tool_calls": ids.tool_call_id}
_ID_COLUMN = {"turns": "turn_id", "messages": "message_id", "tool_calls": "tool_call_id"}
_LINK = {"turn": ids.turn_id, "message": ids.message_id}
_FIELDS = {key: {f.name: f for f in fields} for key, (_, fields) in wire.ROWS.items()}
_SESSION_FIELDS = {f.name: f for f in wire.SESSION}
_DEFAULT_TYPE = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool_result",
}


def decode_request(data: bytes | str) -> ImportBatch:
    return decode_parsed(parse_request(data), data)


def parse_request(data: bytes | str) -> dict[str, Any]:
    """The request's JSON object, or a RequestError saying why there is none."""
    try:
        request = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise RequestError(f"request is not valid JSON: {exc}") from None
    if not isinstance(request, dict):
        raise RequestError("request must be a JSON object with an `items` list")
    return request


def decode_parsed(
    request: dict[str, Any],
    data: bytes | str,
    *,
    may_be_empty: bool = False,
    ledger_links: list[tuple[str, str, str]] | None = None,
) -> ImportBatch:
    """A parsed request (`data` its bytes, for the idempotency hash of one that nests too
    deep for canonical JSON) as a batch. `may_be_empty`: a gateway's push, whose cursors and
    rejects may come without any session. `ledger_links`: a push's too, whose rows may link
    by ledger id (`wire.LEDGER_LINKS`); each (session id, target, ledger id) is added to it."""
    unknown = sorted(set(request) - _ENVELOPE_KEYS)
    if unknown:
        raise RequestError(f"unknown field `{unknown[0]}` in the request envelope")
    items = request.get("items")
    if not isinstance(items, list) or not (items or may_be_empty):
        raise RequestError("request has no items: `items` must be a non-empty list")
    mode = request.get("mode", "import")
    if mode not in MODES:
        raise RequestError(f"`mode` must be one of {', '.join(MODES)}, not {mode!r}")
    for key in ("source", "runId", "idempotencyKey"):
        if request.get(key) is not None and not isinstance(request[key], str):
            raise RequestError(f"`{key}` must be a string")

    decoded: list[ImportItem] = []
    invalid: list[ItemResult] = []
    invalid_at: list[int] = []
    rows: dict[str, list[dict[str, Any]]] = {t.name: [] for t in CONTENT_TABLES.values()}
    for index, raw in enumerate(items):
        try:
            outside: list[tuple[str, str]] | None = [] if ledger_links is not None else None
            item, item_rows = _decode_item(raw, outside)
        except ValidationError as exc:
            provider, source_id = _names(raw)
            invalid.append(
                ItemResult(provider, source_id, None, "failed", f"items[{index}]: {exc}")
            )
            invalid_at.append(index)
            continue
        decoded.append(item)
        if ledger_links is not None and outside:
            ledger_links.extend((item.session_id, target, id_) for target, id_ in outside)
        for table, table_rows in item_rows.items():
            rows[table].extend(table_rows)

    # As tuples in column order, the form a sync hands its store: no frame is built only to
    # be unpacked again by the writer.
    tuples = {
        t.name: [tuple(map(row.get, t.names)) for row in rows[t.name]]
        for t in CONTENT_TABLES.values()
    }
    return ImportBatch(
        items=tuple(decoded),
        rows=tuples,
        source=request.get("source") or "import",
        run_id=request.get("runId") or new_run_id(),
        mode=mode,
        idempotency_key=request.get("idempotencyKey"),
        invalid=tuple(invalid),
        invalid_at=tuple(invalid_at),
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


def _decode_item(
    raw: Any, outside: list[tuple[str, str]] | None = None
) -> tuple[ImportItem, dict[str, list[dict[str, Any]]]]:
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
    session = _decode_session(raw.get("session", {}), provider, source_session_id)

    item_rows: dict[str, list[dict[str, Any]]] = {}
    fingerprints: list[str] = []
    for key, (table_name, _) in wire.ROWS.items():
        table = TABLES_BY_NAME[table_name]
        values = raw.get(key) or []
        if not isinstance(values, list):
            raise ValidationError(f"`{key}` must be a list")
        decoded_rows = []
        for index, value in enumerate(values):
            at = f"{key}[{index}]"
            row = _decode_row(key, table, value, at, provider, source_session_id, outside)
            row["session_id"] = session["session_id"]
            row["fingerprint"] = row_fingerprint(table, row)
            fingerprints.append(row["fingerprint"])
            decoded_rows.append(row)
        item_rows[table.name] = decoded_rows
    own_messages = {row["message_id"] for row in item_rows.get("messages", [])}
    own_messages.update(id_ for target, id_ in outside or () if target == "message")
    for index, row in enumerate(item_rows.get("message_sources", [])):
        if row["message_id"] not in own_messages:  # a source may not attach to another session
            raise ValidationError(f"sources[{index}].sourceMessageId: not a message of this item")

    _count_rows(session, item_rows)
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


_COUNTED = {"turn_count": "turns", "message_count": "messages", "tool_call_count": "tool_calls"}
_TOKENS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens",
           "reasoning_tokens", "total_tokens")  # fmt: skip


def _count_rows(session: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> None:
    """The session's counts and token totals, when its producer leaves them out (the draft has
    no such fields): counted from the item's rows, a session's totals being its turns' sums."""
    for column, table in _COUNTED.items():
        if session.get(column) is None:
            session[column] = len(rows.get(table, []))
    if all(session.get(t) is None for t in _TOKENS):
        for token in _TOKENS:
            values = [t[token] for t in rows.get("turns", []) if t.get(token) is not None]
            if values:
                session[token] = min(sum(values), MAX_COUNT)


def _required_str(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise ValidationError(f"{key}: required, a non-empty string")
    return value


def _decode_session(value: Any, provider: str, source_session_id: str) -> dict[str, Any]:
    """The session row; its links to a parent are derived within the parent session."""
    if not isinstance(value, dict):
        raise ValidationError("session: expected an object")
    row: dict[str, Any] = {}
    for key, field_value in value.items():
        field = _SESSION_FIELDS.get(key)
        if field is None:
            raise ValidationError(f"session.{key}: unknown field")
        row[field.column] = _convert_field(SESSIONS, field, field_value, f"session.{key}")
    parent = row.get("parent_source_session_id")
    for column, source_column, derive in (
        ("parent_message_id", "parent_source_message_id", ids.message_id),
        ("spawn_tool_call_id", "spawn_source_tool_call_id", ids.tool_call_id),
    ):
        if row.get(source_column) is None:
            continue
        if parent is None:
            field_name = "parentSourceMessageId" if "message" in column else "spawnToolCallId"
            raise ValidationError(f"session.{field_name}: needs session.parentSourceSessionId")
        row[column] = derive(provider, parent, row[source_column])
    if parent is not None:
        row["parent_session_id"] = ids.session_id(provider, parent)
    row["session_id"] = ids.session_id(provider, source_session_id)
    row["source_provider"] = provider
    row["source_session_id"] = source_session_id
    row["label"] = row.get("label") or ids.session_label(provider, source_session_id)
    workspace = row.get("workspace_path")
    if row.get("project") is None and workspace:  # as the parsers name it: the last path part
        row["project"] = re.split(r"[\\/]", workspace.rstrip("/\\"))[-1] or None
    return row


def _decode_row(
    key: str,
    table: Table,
    value: Any,
    where: str,
    provider: str,
    source_session_id: str,
    outside: list[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """One row; with `outside` (a push), its `ledgerLinks` too, each (target, id) added."""
    if not isinstance(value, dict):
        raise ValidationError(f"{where}: expected an object")
    fields = _FIELDS[key]
    row: dict[str, Any] = {}
    linked = value.get(wire.LEDGER_LINKS) if outside is not None else None
    if linked is not None and outside is not None:
        value = {k: v for k, v in value.items() if k != wire.LEDGER_LINKS}
        row.update(_ledger_links(fields, value, linked, f"{where}.{wire.LEDGER_LINKS}", outside))
    for name, field_value in value.items():
        field = fields.get(name)
        if field is None:
            raise ValidationError(f"{where}.{name}: unknown field")
        at = f"{where}.{name}"
        if field.form == "link" and field_value is not None:
            link = _LINK[field.target or "message"]
            row[field.column] = link(provider, source_session_id, _source_id(field_value, at))
        elif field.form == "links" and field_value is not None:
            if not isinstance(field_value, list):
                raise ValidationError(f"{at}: expected a list of source ids")
            linked = [
                ids.message_id(provider, source_session_id, _source_id(v, f"{at}[{i}]"))
                for i, v in enumerate(field_value)
            ]
            row[field.column] = canonical_json(linked).decode()
        else:
            row[field.column] = _convert_field(table, field, field_value, at)
    for name in wire.REQUIRED[key]:
        if value.get(name) is None and (linked is None or name not in linked):
            raise ValidationError(f"{where}.{name}: missing (required)")
    if table.name in _OWN_ID:
        source_column = next(f.column for f in fields.values() if f.form == "own")
        own = _OWN_ID[table.name](provider, source_session_id, row[source_column])
        row[_ID_COLUMN[table.name]] = own
    if table.name == "messages" and row.get("message_type") is None:
        row["message_type"] = _DEFAULT_TYPE[row["role"]]
    if table.name == "message_sources" and row.get("source_id") is None:
        if not row.get("uri") or not row.get("source_type"):
            raise ValidationError(f"{where}: sourceId, or sourceType and uri, are required")
        row["source_id"] = ids.source_id(row["source_type"], row["uri"])
    if table.name == "message_sources" and row.get("source_type") is None:
        raise ValidationError(f"{where}.sourceType: missing (required)")
    if table.name == "tool_calls" and row.get("spawned_source_session_id") is not None:
        row["spawned_session_id"] = ids.session_id(provider, row["spawned_source_session_id"])
    return row


def _ledger_links(
    fields: dict[str, wire.Field],
    value: dict[str, Any],
    linked: Any,
    where: str,
    outside: list[tuple[str, str]],
) -> dict[str, Any]:
    if not isinstance(linked, dict):
        raise ValidationError(f"{where}: expected an object of field name → ledger id")
    columns: dict[str, Any] = {}
    for name, ids_given in linked.items():
        field = fields.get(name)
        if field is None or field.form not in ("link", "links"):
            raise ValidationError(f"{where}.{name}: not a link field")
        if name in value:
            raise ValidationError(f"{where}.{name}: given twice, by source id and by ledger id")
        target = field.target or "message"
        if field.form == "link":
            columns[field.column] = _source_id(ids_given, f"{where}.{name}")
            outside.append((target, ids_given))
        else:
            if not isinstance(ids_given, list):
                raise ValidationError(f"{where}.{name}: expected a list of ledger ids")
            for i, one in enumerate(ids_given):
                outside.append((target, _source_id(one, f"{where}.{name}[{i}]")))
            columns[field.column] = canonical_json(ids_given).decode()
    return columns


def _source_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValidationError(f"{where}: expected a source id (a non-empty string)")
    return value


def _convert_field(table: Table, field: wire.Field, value: Any, where: str) -> Any:
    if value is None:
        return None
    if field.form == "time":
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= wire.MAX_MS:
            raise ValidationError(f"{where}: expected epoch milliseconds (an integer ≥ 0)")
        return wire.iso_from_ms(value)
    if field.form == "result" and not isinstance(value, str):
        return _convert(Kind.JSON, value, where)
    column = _COLUMNS[table.name, field.column]
    converted = _convert(column.kind, value, where)
    if column.choices and converted not in column.choices:
        raise ValidationError(
            f"{where}: unknown {field.column} {converted!r} (one of {', '.join(column.choices)})"
        )
    return converted


_COLUMNS = {(t.name, c.name): c for t in TABLES_BY_NAME.values() for c in t.columns}
_EXPECTED = {Kind.TEXT: "a string", Kind.INT: "an integer", Kind.BOOL: "a boolean"}


def _convert(kind: Kind, value: Any, where: str) -> Any:
    # The common shapes return at once: this runs for every field of every pushed row.
    if value is None:
        return None
    if kind is Kind.TEXT:
        if isinstance(value, str):
            return value if len(value) <= MAX_FIELD else cap(value, MAX_FIELD)
    elif kind is Kind.INT:
        if isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value <= MAX_COUNT:
                raise ValidationError(f"{where}: {value} is out of range (0 … 2^53-1)")
            return value
    elif kind is Kind.BOOL:
        if isinstance(value, bool):
            return value
    else:  # JSON
        try:
            text = canonical_json(value).decode()
        except (TypeError, ValueError) as exc:  # nested past what any JSON writer can hold
            raise ValidationError(f"{where}: cannot be stored as JSON ({exc})") from None
        if len(text) > MAX_FIELD:
            raise ValidationError(f"{where}: {len(text)} bytes of JSON, over the {MAX_FIELD} cap")
        return text
    raise ValidationError(f"{where}: expected {_EXPECTED[kind]}, got {type(value).__name__}")
