"""One `sessions.import` request from outside the pipeline (a file, stdin, later the gateway),
applied and logged as a run of its own, with its size and end time."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import orjson

from tracehouse.errors import ConfigError, RequestError
from tracehouse.model.codec import decode_request
from tracehouse.model.contract import Clear, ImportBatch, ImportResponse, ItemResult, new_run_id
from tracehouse.redaction.rows import redact_batch
from tracehouse.store.protocol import RunTotals, SessionStore

if TYPE_CHECKING:
    from tracehouse.redaction.redactor import Redactor

ITEMS_PER_REQUEST = 100  # JSONL lines applied per transaction
_ITEM_INDEX = re.compile(r"^items\[(\d+)\]")


def _import(store: SessionStore, batch: ImportBatch, redactor: Redactor | None) -> ImportResponse:
    """A received batch stored, redacted first unless redaction is off."""
    if redactor is not None:
        batch = redact_batch(redactor, batch)
    return store.import_batch(batch)


def apply_request(
    store: SessionStore, batch: ImportBatch, size: int, redactor: Redactor | None = None
) -> ImportResponse:
    """`batch` as `decode_request` made it from `size` bytes; a bad item is a failed result."""
    response = _import(store, batch, redactor)
    failed = response.count("failed")
    error = f"{failed} item(s) failed" if failed else None
    store.finish_run(batch.run_id, RunTotals(bytes_read=size, error=error))
    return response


def apply_item_lines(
    store: SessionStore, data: bytes, redactor: Redactor | None = None
) -> ImportResponse:
    """A JSONL file of `sessions.import` items (what `export --format jsonl` writes), one per
    line, applied as one run in requests of `ITEMS_PER_REQUEST`. A line that is not JSON, or
    not a valid item, fails alone, named by its line number; the other lines are imported."""
    run_id = new_run_id()
    results: list[ItemResult] = []
    chunk: list[tuple[int, bytes]] = []

    def flush() -> None:
        if not chunk:
            return
        request = b'{"mode":"import","runId":"%s","items":[%s]}' % (
            run_id.encode(),
            b",".join(line for _, line in chunk),
        )
        response = _import(store, decode_request(request), redactor)
        for result in response.results:
            results.append(_with_line(result, [number for number, _ in chunk]))
        chunk.clear()

    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            results.append(ItemResult("?", "?", None, "failed", f"line {number}: not JSON ({exc})"))
            continue
        chunk.append((number, line))
        if len(chunk) == ITEMS_PER_REQUEST:
            flush()
    flush()
    return _finished(store, run_id, results, len(data), "items")


def apply_request_lines(
    store: SessionStore, data: bytes, redactor: Redactor | None = None
) -> ImportResponse:
    """`sessions.import` requests, one per line (what `export --format sessions-import`
    writes), applied in order as one run. Each keeps its idempotency key, so a stream imported
    again replays every request and writes nothing. A line that is not a request fails alone."""
    run_id = new_run_id()
    results: list[ItemResult] = []
    replayed = True
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            batch = decode_request(line)
        except RequestError as exc:
            results.append(ItemResult("?", "?", None, "failed", f"line {number}: {exc}"))
            replayed = False
            continue
        response = _import(store, replace(batch, run_id=run_id), redactor)
        replayed = replayed and response.replayed
        results.extend(
            replace(r, reason=f"line {number} {r.reason}") if r.reason else r
            for r in response.results
        )
    return _finished(store, run_id, results, len(data), "requests", replayed=replayed)


def _finished(
    store: SessionStore,
    run_id: str,
    results: list[ItemResult],
    size: int,
    what: str,
    *,
    replayed: bool = False,
) -> ImportResponse:
    """A line-by-line import's run closed in the log, and its response."""
    if not results:
        raise ConfigError(f"no {what}: the input holds no JSON lines")
    failed = sum(1 for r in results if r.status == "failed")
    error = f"{failed} item(s) failed" if failed else None
    store.finish_run(run_id, RunTotals(bytes_read=size, error=error))
    return ImportResponse(run_id, tuple(results), replayed=replayed)


def line_kind(data: bytes) -> str | None:
    """What a JSON Lines input holds, by its first line: `requests` or `items`; None when that
    line is not a JSON object by itself (a request written over several lines) or is the one
    request of the input."""
    lines = [line for line in data.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        first = orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(first, dict):
        return None
    if "items" in first:
        return "requests" if len(lines) > 1 else None
    return "items"


def _with_line(result: ItemResult, lines: list[int]) -> ItemResult:
    """A failed item's reason names its line of the file, not its place in a request."""
    reason = result.reason or ""
    found = _ITEM_INDEX.match(reason)
    if found is None:
        return result
    return replace(result, reason=f"line {lines[int(found[1])]}{reason[found.end() :]}")


def acknowledge(store: SessionStore, unit_key: str) -> int:
    """Resolve every unresolved reject of one file (or database) by hand: for input that will
    never read cleanly and that the operator has looked at. It stays resolved until the file is
    read from its start again and the same input is refused again. Returns the rejects resolved."""

    def pending(key: str) -> list[dict[str, Any]]:
        return store.query(
            "SELECT source_provider, count(*) AS n FROM rejects WHERE resolved_at IS NULL"
            " AND unit_key = ? GROUP BY 1",
            [key],
        )

    rows = pending(unit_key)
    if not rows and not os.path.isabs(unit_key):  # a path relative to here, as a shell gives it
        unit_key = os.path.abspath(unit_key)
        rows = pending(unit_key)
    if not rows:
        raise ConfigError(
            f"--acknowledge {unit_key}: no unresolved rejects there (`tracehouse rejects` lists"
            " them, with their files)"
        )
    run_id = new_run_id()
    store.start_run(run_id, "import")
    # from_line=1 and the empty key prefix cover every location of the unit.
    clears = tuple(Clear(r["source_provider"], unit_key, 1, ("",)) for r in rows)
    store.import_batch(ImportBatch(items=(), run_id=run_id, mode="import", clears=clears))
    store.finish_run(run_id, RunTotals())
    return sum(int(r["n"]) for r in rows)
