"""A stored session as one `sessions.import` item: the inverse of `codec.decode_request`.

What `export --format jsonl` writes, one item per line, so that `tracehouse import` reads it
back into the same rows (same ids, same fingerprints). Columns the store derives or keeps for
itself are left out: row fingerprints (recomputed from the values), and the provenance a store
stamps on import (host, importer version, import times, a vanished source). JSON columns go out
as JSON, not as strings of JSON.
"""

from __future__ import annotations

from typing import Any

import orjson

from tracehouse.model.tables import CONTENT_TABLES, SESSIONS, Kind, Table, camel

STORE_OWNED = frozenset(
    {"fingerprint", "host", "importer_version", "first_imported_at", "last_imported_at",
     "source_missing_at"}
)  # fmt: skip


def encode_item(detail: dict[str, Any]) -> dict[str, Any]:
    """`detail` as `sinks.reads.session_detail` loads it (its rows as the store keeps them)."""
    session = detail["session"]
    rows = {"turns": detail["turns"], "messages": detail["messages"],
            "toolCalls": detail["tool_calls"], "sources": detail["sources"]}  # fmt: skip
    item: dict[str, Any] = {
        "sourceProvider": session["source_provider"],
        "sourceSessionId": session["source_session_id"],
        "sourceSessionFingerprint": session["fingerprint"],
        "session": _row(SESSIONS, session),
    }
    for key, table in CONTENT_TABLES.items():
        if rows[key]:
            item[key] = [_row(table, row) for row in rows[key]]
    return item


def _row(table: Table, row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for column in table.columns:
        value = row.get(column.name)
        if value is None or column.name in STORE_OWNED:
            continue
        if column.kind is Kind.JSON:
            value = _json_value(value)
        elif column.kind is Kind.BOOL:
            value = bool(value)  # SQLite keeps 0 and 1
        out[camel(column.name)] = value
    return out


def _json_value(value: Any) -> Any:
    """A stored JSON column decoded; PostgreSQL hands it back decoded already. Text that does
    not parse (a hand edit) goes out as the string it is rather than being dropped."""
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return value
