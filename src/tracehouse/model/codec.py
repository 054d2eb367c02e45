"""The JSON form of the import contract: `sessions.import` requests as the draft has them, with
tracehouse's documented extensions (DESIGN §4; the fields are declared in `model/wire.py`).

Decoding validates every item on its own. An invalid item becomes a `failed` result whose reason
names the item and the field; only an envelope that cannot be read refuses the whole request.
Every ledger id is derived here from source ids within the item's provider, so an item can only
write its own session's rows; row fingerprints are computed as the parsers compute them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import xxhash

from tracehouse.errors import RequestError, ValidationError
from tracehouse.model import wire
from tracehouse.model.contract import (
    MODES,
    ImportBatch,
    ImportItem,
    ItemResult,
    new_run_id,
)
from tracehouse.model.fields import MAX_COUNT
from tracehouse.model.fingerprint import combine, fingerprint_of
from tracehouse.model.row_codec import decode_row, decode_session
from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import (
    CONTENT_TABLES,
    MESSAGE_SOURCES,
    MESSAGES,
    PROVIDERS,
    SESSIONS,
    TABLES_BY_NAME,
    TOKEN_COLUMNS,
)
from tracehouse.model.titles import title_from_prompts

# The largest text a field keeps (DESIGN §9): longer text is cut with a marker, as parsers do.

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
            # A copy (`migration`) carries its rows as they were, bare fields too.
            item, item_rows = _decode_item(raw, outside, derive=mode != "migration")
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
    raw: Any, outside: list[tuple[str, str]] | None = None, derive: bool = True
) -> tuple[ImportItem, dict[str, list[dict[str, Any]]]]:
    """One item. With `derive`, what the request leaves out that a backfill would derive from
    the rows is derived the same way: the session's times and title, a cited source's time."""
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
    session = decode_session(raw.get("session", {}), provider, source_session_id)

    item_rows: dict[str, list[dict[str, Any]]] = {}
    fingerprints: list[str] = []
    written: dict[str, Any] = {}  # message id → when it was written
    for key, (table_name, _) in wire.ROWS.items():
        table = TABLES_BY_NAME[table_name]
        values = raw.get(key) or []
        if not isinstance(values, list):
            raise ValidationError(f"`{key}` must be a list")
        decoded_rows = []
        for index, value in enumerate(values):
            at = f"{key}[{index}]"
            row = decode_row(key, table, value, at, provider, source_session_id, outside)
            row["session_id"] = session["session_id"]
            if derive and table is MESSAGE_SOURCES and row.get("created_at") is None:
                row["created_at"] = written.get(row["message_id"])  # when it was cited
            row["fingerprint"] = row_fingerprint(table, row)
            fingerprints.append(row["fingerprint"])
            decoded_rows.append(row)
        item_rows[table.name] = decoded_rows
        if table is MESSAGES:
            written = {m["message_id"]: m.get("created_at") for m in decoded_rows}
    if derive:
        _fill_session(session, item_rows)
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
    if (
        not isinstance(imported_at, int)
        or isinstance(imported_at, bool)
        or not 0 <= imported_at <= wire.MAX_MS
    ):
        raise ValidationError(f"importedAtMs: expected epoch milliseconds, 0 to {wire.MAX_MS}")
    item = ImportItem(
        source_provider=provider,
        source_session_id=source_session_id,
        fingerprint=fingerprint,
        imported_at_ms=imported_at,
        session=session,
    )
    return item, item_rows


_COUNTED = {"turn_count": "turns", "message_count": "messages", "tool_call_count": "tool_calls"}


def _fill_session(session: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> None:
    """A session the request leaves bare gets what a backfill derives: its start and last change
    from its messages' and turns' times, its title from its first prompt (`model/titles`;
    none for a Gemini CLI subagent, as its parser gives none)."""
    times = [m["created_at"] for m in rows.get("messages", []) if m.get("created_at")]
    for turn in rows.get("turns", []):
        times += [turn[c] for c in ("started_at", "completed_at") if turn.get(c)]
    if times and session.get("created_at") is None:
        session["created_at"] = min(times)
    if times and session.get("updated_at") is None:
        session["updated_at"] = max(times)
    untitled = session.get("source_provider") == "gemini-cli" and session.get("is_subagent")
    if session.get("title") is None and not untitled:
        prompts = sorted((m for m in rows.get("messages", []) if m.get("message_type") == "user"),
                         key=_place)  # fmt: skip
        session["title"] = title_from_prompts([m.get("content") for m in prompts])


def _place(message: dict[str, Any]) -> int:
    seq = message.get("seq")
    return seq if isinstance(seq, int) else 1 << 62


def _count_rows(session: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> None:
    """The session's counts and token totals, when its producer leaves them out (the draft has
    no such fields): counted from the item's rows, a session's totals being its turns' sums."""
    for column, table in _COUNTED.items():
        if session.get(column) is None:
            session[column] = len(rows.get(table, []))
    if all(session.get(t) is None for t in TOKEN_COLUMNS):
        for token in TOKEN_COLUMNS:
            values = [t[token] for t in rows.get("turns", []) if t.get(token) is not None]
            if values:
                session[token] = min(sum(values), MAX_COUNT)


def _required_str(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise ValidationError(f"{key}: required, a non-empty string")
    return value
