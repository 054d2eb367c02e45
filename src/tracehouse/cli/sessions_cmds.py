"""`tracehouse sessions …`: read the ledger."""

from __future__ import annotations

from typing import Annotated

import typer

from tracehouse.cli.common import Context, LimitOpt, ProviderOpt, command
from tracehouse.exports.transcript import focus, render
from tracehouse.model.stored_json import for_json
from tracehouse.sinks.reads import SessionNotFound, find_session, list_sessions, session_detail

app = typer.Typer(help="List and show imported sessions.", no_args_is_help=True)


@app.command("list")
@command
def list_(
    ctx: Context,
    provider: ProviderOpt = None,
    limit: LimitOpt = 50,
) -> None:
    """Sessions, most recently active first."""
    rows = ctx.read(lambda ledger: list_sessions(ledger, provider, limit))
    if ctx.json:
        ctx.print_json(rows)
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for name, justify in (
        ("label", "left"),
        ("provider", "left"),
        ("updated", "left"),
        ("msgs", "right"),
        ("tokens", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("title", no_wrap=True, overflow="ellipsis", max_width=70)
    for r in rows:
        title = r["title"] or r["task_description"] or r["project"] or ""
        if r["is_subagent"]:
            title = f"↳ {title}"
        if r["source_missing_at"]:
            title = f"{title} (source gone)"
        table.add_row(
            r["label"],
            r["source_provider"],
            (r["updated_at"] or "")[:16],
            str(r["message_count"]),
            f"{r['total_tokens'] or 0:,}",
            title,
        )
    ctx.out.print(table)


@app.command("show")
@command
def show(
    ctx: Context,
    ref: Annotated[str, typer.Argument(help="Session id, label (e.g. cc-6a963594) or source id.")],
    thinking: Annotated[bool, typer.Option("--thinking", help="Unfold thinking.")] = False,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="Open at this message or tool call id (as `search` prints), with a few"
            " messages around it.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """One session in order: attribution, tool calls and results, sources, subagents."""
    ledger = ctx.store(create=False)
    try:
        session = find_session(ledger, ref)
        detail = session_detail(ledger, session["session_id"])
    finally:
        ledger.close()
    if at is not None:
        try:
            detail = focus(detail, at)
        except LookupError:
            raise SessionNotFound(f"--at {at!r}: no such message or tool call in {ref}") from None
    if ctx.json:
        ctx.print_json(_decoded(detail))
        return
    typer.echo(render(detail, show_thinking=thinking, cut=100_000 if ctx.verbose else 600))


def _decoded(detail: dict) -> dict:  # type: ignore[type-arg]
    """JSON columns as JSON, not as strings inside JSON; an unreadable one says so."""
    json_columns = {"metadata", "meta", "params", "query_message_ids"}

    def fix(row: dict) -> dict:  # type: ignore[type-arg]
        return {k: for_json(v) if k in json_columns else v for k, v in row.items()}

    rows = {"session", "turns", "messages", "tool_calls", "sources", "children"}
    out = {}
    for k, v in detail.items():  # labels, and --at's focus and hidden counts, stay as they are
        if k not in rows:
            out[k] = v
        else:
            out[k] = fix(v) if isinstance(v, dict) else [fix(r) for r in v]
    return out
