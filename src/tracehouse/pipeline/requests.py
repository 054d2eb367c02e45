"""One `sessions.import` request from outside the pipeline (a file, stdin, later the gateway),
applied and logged as a run of its own, with its size and end time."""

from __future__ import annotations

from tracehouse.errors import ConfigError
from tracehouse.model.contract import Clear, ImportBatch, ImportResponse, new_run_id
from tracehouse.sinks.protocol import RunTotals, SessionStore


def apply_request(store: SessionStore, batch: ImportBatch, size: int) -> ImportResponse:
    """`batch` as `decode_request` made it from `size` bytes; a bad item is a failed result."""
    response = store.import_batch(batch)
    failed = response.count("failed")
    error = f"{failed} item(s) failed" if failed else None
    store.finish_run(batch.run_id, RunTotals(bytes_read=size, error=error))
    return response


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
