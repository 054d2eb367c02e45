"""`tracehouse search QUERY`: full-text search of the ledger."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Annotated

import typer

from tracehouse.cli.common import PROVIDER_NAMES, Context, command
from tracehouse.cli.filter_opts import ModelOpt
from tracehouse.reports.filters import build_search_filters
from tracehouse.search.hits import MARK, Hit
from tracehouse.timespec import local_time

if TYPE_CHECKING:
    from rich.text import Text

SYNTAX = (
    'Words must all appear; "a phrase"; -word excludes; a OR b; migrat* is a prefix.'
    " Paths, identifiers and flags match as the phrase of their words."
)


def _mode(value: str | None) -> str | None:
    from tracehouse.search.semantic import check_mode

    try:
        return None if value is None else check_mode(value)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None


@command
def search(
    ctx: Context,
    words: Annotated[list[str], typer.Argument(help=SYNTAX, show_default=False,
                                               metavar="QUERY…")],
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", help=f"{PROVIDER_NAMES} (repeatable).", show_default=False),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option("--project", help="Workspace path or project name (a prefix).",
                     show_default=False),
    ] = None,
    model: ModelOpt = None,
    session: Annotated[
        str | None,
        typer.Option("--session", help="Only this session (label or id) and its subagents.",
                     show_default=False),
    ] = None,
    kind: Annotated[
        list[str] | None,
        typer.Option("--type", "--role", help="user, assistant, system, tool, thinking, host or"
                     " title (repeatable).", show_default=False),
    ] = None,
    tool: Annotated[
        str | None,
        typer.Option("--tool", help="Only calls of this tool (e.g. Bash, shell).",
                     show_default=False),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="From this local date or time, or a duration (7d, 12h).",
                     show_default=False),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", help="Before this local date or time, or a duration.",
                     show_default=False),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="At most this many hits.")] = 20,
    mode: Annotated[
        str | None,
        typer.Option("--mode", help="lexical (the words), semantic (the meaning) or hybrid"
                     " (both). Default: hybrid where the ledger has vectors, else lexical.",
                     callback=_mode, show_default=False),
    ] = None,
) -> None:  # fmt: skip
    """Find anything said, run or read: ranked hits with the matched words highlighted."""
    from tracehouse.reports import searching
    from tracehouse.search.embedders import Lazy

    query = " ".join(words)  # `search rotate key` as `search "rotate key"`
    ledger = ctx.store(create=False)
    try:
        filters = build_search_filters(
            ledger, providers=provider or (), project=project, models=model or (), session=session,
            kinds=kind or (), tool=tool, since=since, until=until, limit=limit,
        )  # fmt: skip
        answer = searching.search(
            ledger, query, filters, mode=mode, embeddings=Lazy(ctx.settings.embeddings)
        )
        hits = answer.hits
        lag = ledger.search_lag()
    finally:
        ledger.close()
    if ctx.json:
        ctx.print_json({"query": query, "mode": answer.mode, "hits": [h.to_json() for h in hits],
                        "unindexedRows": lag})  # fmt: skip
        return
    if answer.note:
        ctx.err.print(f"note: searched by words only: {answer.note}", markup=False)
    if lag:
        ctx.err.print(
            f"note: {lag:,} rows are not in the search index yet (a backfill under way, or one"
            " stopped before it finished): the next sync indexes them"
        )
    if not hits:
        ctx.err.print(f"no hits for {query!r}")
        return
    from rich.text import Text

    for hit in hits:
        where = " · ".join(
            x for x in (hit.label, hit.provider, hit.project, local_time(hit.created_at)) if x
        )
        what = f"{hit.kind} {hit.tool_name}" if hit.tool_name else hit.kind
        if hit.repeats > 1:
            what += f" ×{hit.repeats}"
        ctx.out.print(Text.assemble((where, "bold"), " · ", (what, "cyan")))
        ctx.out.print(Text("  ").append_text(_highlighted(hit.snippet)))
        ctx.out.print(Text(f"  → {open_command(hit, ctx.given)}", style="dim"), soft_wrap=True)
        ctx.out.print()


def open_command(hit: Hit, given: tuple[str, ...] = ()) -> str:
    from tracehouse.model.labels import reference
    from tracehouse.shown import command_line

    at = hit.message_id or (hit.id if hit.kind == "tool" else None)
    argv = ["tracehouse", "sessions", "show", reference(hit.label, hit.session_id)]
    argv += ["--at", at] if at else []
    return command_line([*argv, *given]) or shlex.join(argv)


def _highlighted(snippet: str) -> Text:
    from rich.text import Text

    text = Text()
    for i, part in enumerate(snippet.replace(MARK[1], MARK[0]).split(MARK[0])):
        text.append(part, style="bold yellow" if i % 2 else "")
    return text
