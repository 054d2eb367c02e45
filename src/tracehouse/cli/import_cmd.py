"""`tracehouse import FILE|-`: apply a `sessions.import` JSON request (DESIGN §4)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tracehouse.cli.common import Context, NoRedactOpt, command
from tracehouse.errors import RequestError
from tracehouse.model.codec import decode_request
from tracehouse.model.contract import ImportResponse
from tracehouse.pipeline.requests import (
    apply_item_lines,
    apply_request,
    apply_request_lines,
    line_kind,
)
from tracehouse.redaction import redactor_for


@command
def import_request(
    ctx: Context,
    file: Annotated[str, typer.Argument(help="A JSON request file, or - for standard input.")],
    lines: Annotated[
        bool,
        typer.Option(
            "--lines",
            help="The input holds one sessions.import item per line (JSONL, as `export --format"
            " jsonl` writes it); on by itself for .jsonl and .ndjson files. Requests one per"
            " line (`export --format sessions-import`) are recognized by themselves.",
        ),
    ] = False,
    no_redact: NoRedactOpt = False,
) -> None:
    """Import a batch written in the sessions.import JSON contract and print the response."""
    ctx.verbatim(no_redact)
    if file == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(file).read_bytes()
        except OSError as exc:
            raise RequestError(f"{file}: cannot read ({exc.strerror})") from None
    kind = line_kind(data)
    if kind is not None and (lines or kind == "requests" or file.endswith((".jsonl", ".ndjson"))):
        ledger = ctx.store()
        try:
            apply = apply_request_lines if kind == "requests" else apply_item_lines
            response = apply(ledger, data, redactor_for(ctx.settings))
        finally:
            ledger.close()
        render_response(ctx, response)
        if not response.ok:
            raise typer.Exit(1)
        return
    try:
        batch = decode_request(data)
    except RequestError as exc:
        raise RequestError(f"{'stdin' if file == '-' else file}: {exc}") from None
    ledger = ctx.store()
    try:
        response = apply_request(ledger, batch, len(data), redactor_for(ctx.settings))
    finally:
        ledger.close()
    render_response(ctx, response)
    if not response.ok:
        raise typer.Exit(1)


def render_response(ctx: Context, response: ImportResponse) -> None:
    if ctx.json:
        ctx.print_json({**response.to_json(), "replayed": response.replayed})
        return
    if ctx.quiet and response.ok:
        return
    if response.replayed:
        ctx.out.print("idempotency key seen before: the stored response, nothing written")
    from rich.table import Table

    table = Table("status", "session", "provider", "rows", "reason", box=None, pad_edge=False)
    for r in response.results:
        table.add_row(
            r.status,
            r.session_label or r.source_session_id,
            r.source_provider,
            str(r.rows_written),
            r.reason or "",
        )
    ctx.out.print(table)
    counts = ", ".join(
        f"{response.count(s)} {s}" for s in ("imported", "upserted", "skipped", "failed")
    )
    ctx.out.print(f"{counts} (run {response.run_id})")
