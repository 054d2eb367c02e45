"""`tracehouse sessions …`: read the ledger."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tracehouse.cli.common import Context, LimitOpt, command
from tracehouse.cli.filter_opts import (
    LabelOpt,
    ModelOpt,
    ProjectOpt,
    ProvidersOpt,
    SinceOpt,
    SubagentsOpt,
    UntilOpt,
    UtcOpt,
    session_filters,
)
from tracehouse.exports.transcript import focus, render
from tracehouse.model.stored_json import for_json
from tracehouse.reports.filters import list_sessions
from tracehouse.sinks.protocol import SessionStore
from tracehouse.sinks.reads import SessionNotFound, find_session, session_detail
from tracehouse.timespec import local_time

app = typer.Typer(help="List and show imported sessions.", no_args_is_help=True)


@app.command("list")
@command
def list_(
    ctx: Context,
    provider: ProvidersOpt = None,
    project: ProjectOpt = None,
    model: ModelOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    subagents: SubagentsOpt = True,
    label: LabelOpt = None,
    utc: UtcOpt = False,
    limit: LimitOpt = 50,
) -> None:
    """Sessions, most recently active first."""

    def read(ledger: SessionStore) -> list[dict[str, Any]]:
        found = session_filters(
            ledger, provider=provider, project=project, model=model, since=since, until=until,
            subagents=subagents, label=label, utc=utc,
        )  # fmt: skip
        return list_sessions(ledger, found, limit)

    rows = ctx.read(read)
    if ctx.json:
        ctx.print_json(rows)
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for name, justify in (
        ("label", "left"),
        ("provider", "left"),
        ("updated", "left"),
        ("project", "left"),
        ("msgs", "right"),
        ("tokens", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("title", no_wrap=True, overflow="ellipsis", max_width=70)
    for r in rows:
        title = " ".join((r["title"] or r["task_description"] or "").split())
        if r["is_subagent"]:
            title = f"↳ {title}"
        if r["source_missing_at"]:
            title = f"{title} (source gone)"
        table.add_row(
            r["label"],
            r["source_provider"],
            local_time(r["updated_at"] or r["created_at"], utc=utc),
            r["project"] or "",
            str(r["message_count"]),
            f"{r['total_tokens']:,}" if r["total_tokens"] else "—",
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
    """One session in order: attribution, tool calls and results, sources, subagents.
    With -v: every turn's tokens and duration, and long text uncut."""
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
    verbose = bool(ctx.verbose)
    typer.echo(
        render(detail, show_thinking=thinking, cut=100_000 if verbose else 600, turns=verbose)
    )


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
