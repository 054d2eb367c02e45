"""`tracehouse sessions …`: read the ledger."""

from __future__ import annotations

import sys
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
from tracehouse.errors import ConfigError
from tracehouse.exports.transcript import focus, render
from tracehouse.exports.transcript import since as since_
from tracehouse.model.stored_json import for_json
from tracehouse.model.threads import active_view
from tracehouse.reports.filters import count_sessions, list_sessions
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import SessionNotFound, find_session, session_detail, session_history
from tracehouse.timespec import local_time, to_utc_iso
from tracehouse.upkeep.deletion import HasSubagents, delete_sessions, restore_sessions

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

    def read(ledger: SessionStore) -> tuple[list[dict[str, Any]], int]:
        found = session_filters(
            ledger, provider=provider, project=project, model=model, since=since, until=until,
            subagents=subagents, label=label, utc=utc,
        )  # fmt: skip
        rows = list_sessions(ledger, found, limit)
        return rows, (count_sessions(ledger, found) if len(rows) == limit else len(rows))

    rows, total = ctx.read(read)
    if ctx.json:
        ctx.print_json(rows)
        return
    if not rows:  # a header alone reads as a broken list
        filtered = any(v is not None for v in (provider, project, model, since, until, label))
        ctx.err.print("no sessions match these filters" if filtered or not subagents
                      else "no sessions in this ledger yet")  # fmt: skip
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
    if total > len(rows) and not ctx.quiet:  # a cut list says so, and how to see the rest
        ctx.err.print(f"{len(rows):,} of {total:,} sessions, most recent first; --limit N for more")


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
    history: Annotated[
        bool,
        typer.Option("--history", help="Every import that changed the session, instead."),
    ] = False,
    all_branches: Annotated[
        bool,
        typer.Option(
            "--all-branches",
            help="Every turn, also those of branches a rewind left (by default: the"
            " conversation as it stands, with the branches marked).",
        ),
    ] = False,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only the messages from this local date or time, or a duration (10m, 2h) ago:"
            " what came in since you last looked.",
            show_default=False,
        ),
    ] = None,
    utc: UtcOpt = False,
) -> None:
    """One session in order: attribution, tool calls and results, sources, subagents.
    With -v: every turn's tokens and duration, and long text uncut."""
    moment = to_utc_iso(since, option="--since", utc=utc) if since is not None else None
    if moment is not None and at is not None:
        raise ConfigError("--since and --at: give one of them")
    ledger = ctx.store(create=False)
    try:
        session = find_session(ledger, ref)
        if history:
            _show_history(ctx, session, session_history(ledger, session["session_id"]))
            return
        detail = session_detail(ledger, session["session_id"])
    finally:
        ledger.close()
    if not all_branches and at is None:
        detail = active_view(detail, f"`sessions show {session['label']} --all-branches`")
    if at is not None:
        try:
            detail = focus(detail, at)
        except LookupError:
            raise SessionNotFound(f"--at {at!r}: no such message or tool call in {ref}") from None
    if moment is not None:
        detail = since_(detail, moment)
    if ctx.json:
        ctx.print_json(_decoded(detail))
        return
    from tracehouse.shown import escaped

    verbose = bool(ctx.verbose)
    text = render(detail, show_thinking=thinking, cut=100_000 if verbose else 600, turns=verbose)
    from tracehouse.cli.paging import page

    page(escaped(text).rstrip("\n") + "\n")


def _show_history(ctx: Context, session: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    if ctx.json:
        ctx.print_json(rows)
        return
    from rich.table import Table

    table = Table("when", "run", "status", "rows", "fingerprint", box=None, pad_edge=False)
    for r in rows:
        before = (r["fingerprint_before"] or "")[3:11]
        after = (r["fingerprint_after"] or "")[3:11]
        change = f"{before} → {after}" if before else after
        when = local_time(r["recorded_at"]) if r["recorded_at"] else "?"
        table.add_row(when, r["run_id"], r["status"], str(r["rows_written"]), change)
    ctx.out.print(f"{session['label']}: {len(rows)} import(s) changed it")
    ctx.out.print(table)


@app.command("delete")
@command
def delete(
    ctx: Context,
    refs: Annotated[list[str], typer.Argument(help="Labels, ids or source ids of sessions.")],
    with_subagents: Annotated[
        bool, typer.Option("--with-subagents", help="Delete their subagents too.")
    ] = False,
) -> None:
    """Delete sessions with their turns, messages, tool calls and cited sources. A tombstone
    keeps later syncs from bringing them back; `sessions restore` lets them back."""
    ledger = ctx.store(create=False)
    try:
        try:
            gone = delete_sessions(ledger, refs, with_subagents=with_subagents)
        except HasSubagents as exc:
            asked = sys.stdin.isatty() and typer.confirm(f"{exc}. Delete them too?")
            if not asked:
                raise ConfigError(f"{exc}: --with-subagents deletes them as well") from None
            gone = delete_sessions(ledger, refs, with_subagents=True)
    finally:
        ledger.close()
    if ctx.json:
        ctx.print_json(gone)
        return
    from tracehouse.model.labels import reference
    from tracehouse.shown import command_line

    refs_shown = [reference(r["label"], r["session_id"]) for r in gone]
    again = command_line(["tracehouse", "sessions", "restore", *refs_shown, *ctx.given])
    ctx.out.print(f"deleted {len(gone)} session(s): {' '.join(refs_shown)}")
    ctx.out.print(f"`{again}` lets them back at the next sync")


@app.command("restore")
@command
def restore(
    ctx: Context,
    refs: Annotated[list[str], typer.Argument(help="Labels (as shown before), ids or source ids.")],
) -> None:
    """Let deleted sessions back: the next sync reads their source files again."""
    ledger = ctx.store(create=False)
    try:
        try:
            back = restore_sessions(ledger, refs)
        except LookupError as exc:
            raise ConfigError(str(exc)) from None
    finally:
        ledger.close()
    if ctx.json:
        ctx.print_json(back)
        return
    for r in back:
        where = r["source_path"] or "it"  # a path: on one line, however long
        ctx.out.print(f"restored {r['label']}: the next sync reads {where} again", soft_wrap=True)


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
