"""One `sessions.import` request from outside the pipeline (a file, stdin, later the gateway),
applied and logged as a run of its own, with its size and end time."""

from __future__ import annotations

import re
from dataclasses import replace

import orjson

from tracehouse.errors import ConfigError
from tracehouse.model.codec import decode_request
from tracehouse.model.contract import Clear, ImportBatch, ImportResponse, ItemResult, new_run_id
from tracehouse.sinks.protocol import RunTotals, SessionStore

ITEMS_PER_REQUEST = 100  # JSONL lines applied per transaction
_ITEM_INDEX = re.compile(r"^items\[(\d+)\]")


def apply_request(store: SessionStore, batch: ImportBatch, size: int) -> ImportResponse:
    """`batch` as `decode_request` made it from `size` bytes; a bad item is a failed result."""
    response = store.import_batch(batch)
    failed = response.count("failed")
    error = f"{failed} item(s) failed" if failed else None
    store.finish_run(batch.run_id, RunTotals(bytes_read=size, error=error))
    return response


def apply_item_lines(store: SessionStore, data: bytes) -> ImportResponse:
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
        response = store.import_batch(decode_request(request))
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
    if not results:
        raise ConfigError("no items: the input holds no JSON lines")
    failed = sum(1 for r in results if r.status == "failed")
    store.finish_run(
        run_id,
        RunTotals(bytes_read=len(data), error=f"{failed} item(s) failed" if failed else None),
    )
    return ImportResponse(run_id, tuple(results))


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
    rows = store.query(
        "SELECT source_provider, count(*) AS n FROM rejects WHERE resolved_at IS NULL"
        " AND unit_key = ? GROUP BY 1",
        [unit_key],
    )
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
