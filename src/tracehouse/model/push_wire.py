"""A sync's batch as one `sessions.import` request to a gateway, and back (`tracehouse serve`).

The items are the draft's, encoded as an export encodes a stored session (`item_json`), so the
gateway derives the same ids and fingerprints a local store would. What a sync commits beside its
rows travels as tracehouse's push extensions, accepted only from a token with the push scope:

* `cursors` (envelope and item): `{sourceProvider, unitKey, cursor, state?}`, a unit's new place,
  committed with the rows read from it (an item's cursors only if the item is stored);
* `rejects`: `{sourceProvider, unitKey, location, reason, rawExcerpt?}`, what could not be read;
* `clears`: `{sourceProvider, unitKey, fromLine?, keys?}`, where a unit was read again;
* a row's `ledgerLinks`: links to rows of the session pushed before (a tail's new turn whose
  parent came in an earlier batch), by ledger id, accepted where the row linked to is not
  stored in another session.

The gateway keys every unit by the machine that pushed it (`pushed_key`), so two laptops never
share a cursor, and stamps the machine as the sessions' host.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import orjson
import xxhash

from tracehouse.errors import RequestError
from tracehouse.model import codec, wire
from tracehouse.model.contract import (
    Clear,
    ImportBatch,
    ImportItem,
    Reject,
    WatermarkUpdate,
    pushed_key,
)
from tracehouse.model.item_json import encode_item
from tracehouse.model.tables import CONTENT_TABLES

EXTENSIONS = ("cursors", "rejects", "clears")
_DETAIL_KEY = {"turns": "turns", "messages": "messages", "tool_calls": "tool_calls",
               "message_sources": "sources"}  # fmt: skip


def encode_push(batch: ImportBatch) -> bytes:
    """The request a pusher sends for `batch`. Its idempotency key is a hash of its bytes, so
    a retry after a cut connection is answered from the gateway's log, not written again."""
    details: dict[str, dict[str, Any]] = {
        item.session_id: {"session": dict(item.session, fingerprint=item.fingerprint)}
        for item in batch.items
    }
    for detail in details.values():
        detail.update({key: [] for key in _DETAIL_KEY.values()})
    for table in CONTENT_TABLES.values():
        names = table.names
        at = names.index("session_id")
        for values in batch.tuples(table.name):
            details[values[at]][_DETAIL_KEY[table.name]].append(
                dict(zip(names, values, strict=True))
            )
    items = []
    for item in batch.items:
        encoded = encode_item(details[item.session_id], ledger_links=True)
        encoded["importedAtMs"] = item.imported_at_ms
        if item.watermarks:
            encoded["cursors"] = [_cursor(wm) for wm in item.watermarks]
        items.append(encoded)
    request: dict[str, Any] = {
        "source": batch.source,
        "runId": batch.run_id,
        "mode": batch.mode,
        "items": items,
        "cursors": [_cursor(wm) for wm in batch.watermarks],
        "rejects": [_reject(r) for r in batch.rejects],
        "clears": [_clear(c) for c in batch.clears],
    }
    body = orjson.dumps(request)
    key = batch.idempotency_key or "push:" + xxhash.xxh3_128_hexdigest(body)
    return body[:-1] + b',"idempotencyKey":' + orjson.dumps(key) + b"}"


# target ("turn" or "message"), ledger ids → the sessions holding those of them that are stored
SessionsOf = Callable[[str, list[str]], Mapping[str, str]]


def decode_push(data: bytes, machine: str, sessions_of: SessionsOf) -> ImportBatch:
    """A pushed request as the batch the gateway's store applies for `machine`. `sessions_of`
    looks up where the rows it links to by ledger id are stored."""
    request = codec.parse_request(data)
    # The pusher's encoding is deterministic: the bytes are what the key is bound to (a
    # canonical hash of a large batch would cost more than decoding it).
    request_hash = "raw:" + xxhash.xxh3_128_hexdigest(data)
    extras = {key: _list(request.pop(key, []), key) for key in EXTENSIONS}
    items = request.get("items")
    item_cursors: list[list[Any]] = []
    if isinstance(items, list):
        for index, raw in enumerate(items):
            cursors = raw.pop("cursors", []) if isinstance(raw, dict) else []
            item_cursors.append(_list(cursors, f"items[{index}].cursors"))
    linked: list[tuple[str, str, str]] = []
    batch = codec.decode_parsed(request, data, may_be_empty=True, ledger_links=linked)
    _check_ledger_links(linked, sessions_of)
    invalid = set(batch.invalid_at)
    stored = [cursors for i, cursors in enumerate(item_cursors) if i not in invalid]
    decoded = tuple(
        _pushed_item(item, machine, [_update(c, machine, f"item {item.source_session_id}")
                                     for c in cursors])
        for item, cursors in zip(batch.items, stored, strict=True)
    )  # fmt: skip
    return replace(
        batch,
        items=decoded,
        watermarks=tuple(_update(c, machine, "cursors") for c in extras["cursors"]),
        rejects=tuple(_reject_of(r, machine) for r in extras["rejects"]),
        clears=tuple(_clear_of(c, machine) for c in extras["clears"]),
        request_hash=request_hash,
    )


def _check_ledger_links(linked: list[tuple[str, str, str]], sessions_of: SessionsOf) -> None:
    """An item writes only its own session's rows, and links only to them: a row linked to by
    ledger id may be absent (a dangling link, as a local store keeps one) but not another's."""
    for target in ("turn", "message"):
        wanted = {(session_id, id_) for session_id, kind, id_ in linked if kind == target}
        if not wanted:
            continue
        stored = sessions_of(target, sorted({id_ for _, id_ in wanted}))
        for session_id, id_ in sorted(wanted):
            holder = stored.get(id_)
            if holder is not None and holder != session_id:
                raise RequestError(
                    f"{wire.LEDGER_LINKS}: {target} {id_} is not a {target} of session {session_id}"
                )


def _pushed_item(item: ImportItem, machine: str, cursors: list[WatermarkUpdate]) -> ImportItem:
    return replace(item, session={**item.session, "host": machine}, watermarks=tuple(cursors))


def _cursor(wm: WatermarkUpdate) -> dict[str, Any]:
    out: dict[str, Any] = {
        "sourceProvider": wm.source_provider,
        "unitKey": wm.unit_key,
        "cursor": dict(wm.cursor),
    }
    if isinstance(wm.state, bytes):
        out["state"] = orjson.Fragment(wm.state)
    elif wm.state is not None:
        out["state"] = dict(wm.state)
    return out


def _reject(reject: Reject) -> dict[str, Any]:
    return {
        "sourceProvider": reject.source_provider,
        "unitKey": reject.unit_key,
        "location": reject.location,
        "reason": reject.reason,
        "rawExcerpt": reject.raw_excerpt,
    }


def _clear(clear: Clear) -> dict[str, Any]:
    return {
        "sourceProvider": clear.source_provider,
        "unitKey": clear.unit_key,
        "fromLine": clear.from_line,
        "keys": list(clear.keys),
    }


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise RequestError(f"`{where}` must be a list")
    return value


def _object(value: Any, where: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise RequestError(f"{where}: expected an object")
    for key in keys:
        if not isinstance(value.get(key), str) or not value[key]:
            raise RequestError(f"{where}.{key}: expected a non-empty string")
    return value


def _update(value: Any, machine: str, where: str) -> WatermarkUpdate:
    raw = _object(value, where, ("sourceProvider", "unitKey"))
    cursor, state = raw.get("cursor"), raw.get("state")
    if not isinstance(cursor, dict) or not (state is None or isinstance(state, dict)):
        raise RequestError(f"{where}: `cursor` (and `state`) must be objects")
    return WatermarkUpdate(
        raw["sourceProvider"], pushed_key(machine, raw["unitKey"]), cursor, state
    )


def _reject_of(value: Any, machine: str) -> Reject:
    raw = _object(value, "rejects[]", ("sourceProvider", "unitKey", "location", "reason"))
    excerpt = raw.get("rawExcerpt")
    return Reject(
        raw["sourceProvider"],
        pushed_key(machine, raw["unitKey"]),
        raw["location"],
        raw["reason"],
        excerpt if isinstance(excerpt, str) else None,
    )


def _clear_of(value: Any, machine: str) -> Clear:
    raw = _object(value, "clears[]", ("sourceProvider", "unitKey"))
    from_line, keys = raw.get("fromLine"), raw.get("keys") or []
    if from_line is not None and (not isinstance(from_line, int) or isinstance(from_line, bool)):
        raise RequestError("clears[].fromLine: expected an integer")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise RequestError("clears[].keys: expected a list of strings")
    return Clear(raw["sourceProvider"], pushed_key(machine, raw["unitKey"]), from_line, tuple(keys))
