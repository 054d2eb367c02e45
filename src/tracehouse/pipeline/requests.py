"""One `sessions.import` request from outside the pipeline (a file, stdin, later the gateway),
applied and logged as a run of its own, with its size and end time."""

from __future__ import annotations

from tracehouse.model.contract import ImportBatch, ImportResponse
from tracehouse.sinks.protocol import RunTotals, SessionStore


def apply_request(store: SessionStore, batch: ImportBatch, size: int) -> ImportResponse:
    """`batch` as `decode_request` made it from `size` bytes; a bad item is a failed result."""
    response = store.import_batch(batch)
    failed = response.count("failed")
    error = f"{failed} item(s) failed" if failed else None
    store.finish_run(batch.run_id, RunTotals(bytes_read=size, error=error))
    return response
