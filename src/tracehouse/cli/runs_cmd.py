"""`tracehouse runs`: the run log as a table, with throughput, dedupe hits and retries."""

from __future__ import annotations

from typing import Annotated

import typer

from tracehouse.cli.common import Context, LimitOpt, command
from tracehouse.store.reads import list_runs
from tracehouse.timespec import local_time, to_utc_iso


@command
def runs(
    ctx: Context,
    since: Annotated[
        str | None,
        typer.Option("--since", help="A date or a duration such as 7d.", show_default=False),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option("--mode", help="backfill, live, import, migration…", show_default=False),
    ] = None,
    limit: LimitOpt = 20,
) -> None:
    """Recent runs: when, how long, sessions and rows, MB/s, rejects, retries, dedupe hits."""
    start = to_utc_iso(since, option="--since") if since else None
    rows = ctx.read(lambda ledger: list_runs(ledger, start, mode, limit))
    if ctx.json:
        ctx.print_json(rows)
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    columns = ("started", "mode", "status", "secs", "imp", "upd", "skip", "fail", "rows", "MB/s",
               "sess/s", "rejects", "retries", "dedupe", "lag p50/max ms")  # fmt: skip
    for name in columns:
        table.add_column(name, justify="left" if name in columns[:3] else "right")
    for r in rows:
        table.add_row(
            local_time(r["started_at"]),
            r["mode"] or "",
            r["status"],
            _num(r["seconds"], ".2f"),
            *(f"{r[k] or 0:,}" for k in ("imported", "upserted", "skipped", "failed")),
            f"{r['rows_written'] or 0:,}",
            _num(r["mb_per_s"], ".1f"),
            _num(r["sessions_per_s"], ",.0f"),
            str(r["rejects"] or 0),
            str(r["retries"] or 0),
            _num(r["dedupe_rate"], ".0%"),
            _lag(r["tail_lag_p50_ms"], r["tail_lag_ms"]),
        )
    ctx.out.print(table)
    for r in rows:  # the why of each run that waited or failed, under the table
        when = f"{local_time(r['started_at'])} {r['mode'] or ''}"
        if r["retry_reasons"]:
            reasons = ", ".join(f"{why} ×{n}" for why, n in r["retry_reasons"].items())
            ctx.out.print(f"{when}: retried: {reasons}", markup=False, highlight=False)
        if r["redactions"]:
            kinds = ", ".join(f"{kind} ×{n}" for kind, n in r["redactions"].items())
            ctx.out.print(f"{when}: secrets redacted: {kinds}", markup=False, highlight=False)
        if r["error"]:
            ctx.out.print(f"{when}: {r['error']}", markup=False, highlight=False)


def _num(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def _lag(p50: int | None, most: int | None) -> str:
    return "" if most is None else f"{p50 or 0:,}/{most:,}"
