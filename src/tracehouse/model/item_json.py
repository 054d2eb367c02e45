"""A stored session as one `sessions.import` item: the inverse of `codec.decode_request`.

What `export --format jsonl` and `--format sessions-import` write, so that `tracehouse import`
reads it back into the same rows (same ids, same fingerprints). Fields are declared once, in
`model/wire.py`: ledger ids go out as the source ids they were derived from, times as epoch
milliseconds, JSON columns as JSON. What a store keeps for itself stays out: row fingerprints
(recomputed from the values) and the provenance a store stamps on import.
"""

from __future__ import annotations

from typing import Any

import orjson

from tracehouse.model import wire
from tracehouse.model.columns import Kind, Table
from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import STORE_FILLED, TABLES_BY_NAME

_DETAIL_KEYS = {"turns": "turns", "messages": "messages", "toolCalls": "tool_calls",
                "sources": "sources"}  # fmt: skip


class EncodeError(ValueError):
    """A stored row links to a row its session does not hold: it has no source id to send."""


def encode_item(
    detail: dict[str, Any], *, ledger_links: bool = False, drop_outside: bool = False
) -> dict[str, Any]:
    """`detail` as `store.reads.session_detail` loads it (its rows as the store keeps them).

    A link to a row `detail` does not hold has no source id to send: an `EncodeError`, or with
    `ledger_links` (a pusher's tail, whose rows link to rows pushed before) the row's
    `ledgerLinks` extension, `{fieldName: ledger id or ids}`, or with `drop_outside` (an
    export) left out: a ledger written before this release kept a subagent's link into its parent's
    messages, which no form of a session can carry."""
    session = detail["session"]
    sources = {
        "turn": {r["turn_id"]: r["source_turn_id"] for r in detail["turns"]},
        "message": {r["message_id"]: r["source_message_id"] for r in detail["messages"]},
    }
    imported = session.get("source_read_at") or session.get("last_imported_at")
    item: dict[str, Any] = {
        "sourceProvider": session["source_provider"],
        "sourceSessionId": session["source_session_id"],
        "sourceSessionFingerprint": session["fingerprint"],
        "importedAtMs": (imported and wire.ms_from_iso(imported)) or 0,
        "session": _row(
            TABLES_BY_NAME["sessions"],
            wire.SESSION,
            # The label as the producer hinted it, before the store lengthened it apart from
            # others (`store/labels.py`): an importing ledger lengthens it among its own
            # sessions, so an export imported gives the labels, bases and aliases a backfill
            # gives.
            {**session, "label": session.get("label_base") or session["label"]},
            sources,
            "session",
            ledger_links=False,
        ),
    }
    for key, (table_name, fields) in wire.ROWS.items():
        table = TABLES_BY_NAME[table_name]
        rows = detail[_DETAIL_KEYS[key]]
        if rows:
            item[key] = [
                _row(
                    table,
                    fields,
                    _unfilled(table, row),
                    sources,
                    f"{key}[{i}]",
                    ledger_links=ledger_links,
                    drop_outside=drop_outside,
                )
                for i, row in enumerate(rows)
            ]
    return item


def _unfilled(table: Table, row: dict[str, Any]) -> dict[str, Any]:
    """The row as its producer sent it: a link the store filled in afterwards (its fingerprint
    was computed without it) is left for the importing store to fill in again."""
    filled = STORE_FILLED.get(table.name)
    if not filled or row.get(filled[0]) is None:
        return row
    if row["fingerprint"] == row_fingerprint(table, row):
        return row
    return {**row, **dict.fromkeys(filled)}


def _row(
    table: Table,
    fields: tuple[wire.Field, ...],
    row: dict[str, Any],
    sources: dict[str, dict[str, str]],
    where: str,
    *,
    ledger_links: bool,
    drop_outside: bool = False,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    outside: dict[str, Any] = {}
    for field in fields:
        value = row.get(field.column)
        if value is None:
            continue
        if field.form == "time":
            value = wire.ms_from_iso(value)
        elif field.form in ("link", "links"):
            linked = _json_value(value) if field.form == "links" else [value]
            known = sources[field.target or "message"]
            if ledger_links and not all(v in known for v in linked):
                outside[field.name] = value if field.form == "link" else linked
                continue
            if drop_outside and not all(v in known for v in linked):
                linked = [v for v in linked if v in known]
                if field.form == "link":
                    continue
            found = [_source(known, field, v, where) for v in linked]
            value = found if field.form == "links" else found[0]
        elif field.form != "result" and table.column(field.column).kind is Kind.JSON:
            value = _json_value(value)
        elif table.column(field.column).kind is Kind.BOOL:
            value = bool(value)  # SQLite keeps 0 and 1
        if value is not None:
            out[field.name] = value
    if outside:
        out[wire.LEDGER_LINKS] = outside
    return out


def _source(known: dict[str, str], field: wire.Field, value: str, where: str) -> str:
    found = known.get(value)
    if found is None:
        raise EncodeError(f"{where}.{field.name}: {value} is not a {field.target} of the session")
    return found


def _json_value(value: Any) -> Any:
    """A stored JSON column decoded; PostgreSQL hands it back decoded already. Text that does
    not parse (a hand edit) goes out as the string it is rather than being dropped."""
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return value
