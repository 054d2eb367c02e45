"""One row of a `sessions.import` item, field by field (`model/wire.py` declares them): each
value checked and converted to its ledger column, each link derived from source ids within the
item's provider, and, on a gateway's push, links by ledger id (`wire.LEDGER_LINKS`)."""

from __future__ import annotations

import re
from typing import Any

from tracehouse.errors import ValidationError
from tracehouse.model import ids, wire
from tracehouse.model.columns import Kind, Table
from tracehouse.model.fields import MAX_COUNT, cap
from tracehouse.model.fingerprint import canonical_json
from tracehouse.model.labels import label_hint
from tracehouse.model.tables import SESSIONS, TABLES_BY_NAME

MAX_FIELD = 1024 * 1024
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


def decode_session(value: Any, provider: str, source_session_id: str) -> dict[str, Any]:
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
    hint = row.get("label")
    row["label"] = label_hint(str(hint)) if hint else ids.session_label(provider, source_session_id)
    workspace = row.get("workspace_path")
    if row.get("project") is None and workspace:  # as the parsers name it: the last path part
        row["project"] = re.split(r"[\\/]", workspace.rstrip("/\\"))[-1] or None
    return row


def decode_row(
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
            targets = [
                ids.message_id(provider, source_session_id, _source_id(v, f"{at}[{i}]"))
                for i, v in enumerate(field_value)
            ]
            row[field.column] = canonical_json(targets).decode()
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
