"""`tracehouse sync …`: bring the ledger up to date with the agents' logs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tracehouse.cli.common import Context, HomeOpt, NoRedactOpt, SourceOpt, TokenFileOpt, command
from tracehouse.cli.live_cmd import live
from tracehouse.config import parse_source_flags
from tracehouse.humanize import size

if TYPE_CHECKING:
    from tracehouse.pipeline.options import SyncReport

app = typer.Typer(help="Import agent logs into the ledger.", no_args_is_help=True)
app.command("live")(command(live))


@app.command("backfill")
@command
def backfill(
    ctx: Context,
    home: HomeOpt = None,
    source: SourceOpt = None,
    full: Annotated[
        bool, typer.Option("--full", help="Re-parse every file from the start.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Parse and report; write nothing.")
    ] = False,
    token_file: TokenFileOpt = None,
    no_redact: NoRedactOpt = False,
) -> None:
    """Import everything new or changed since the last run (reads only appended bytes)."""
    # The pipeline and its 21 parsers load for this command only, not for `--help`.
    from tracehouse.pipeline.progress import progress_for
    from tracehouse.pipeline.sources import sync_options
    from tracehouse.pipeline.sync import sync

    ctx.pushing_with(token_file)
    ctx.verbatim(no_redact)
    settings = ctx.settings.with_flags(home=str(home) if home else None)
    options = sync_options(
        settings,
        parse_source_flags(source),
        home_given=home is not None,
        full=full,
        dry_run=dry_run,
    )
    ledger = ctx.store()
    try:
        report = sync(
            ledger, options, progress_for(settings.progress and not ctx.quiet and not ctx.json)
        )
        if (
            settings.limits
            and not dry_run
            and report.statuses["imported"] + report.statuses["upserted"]
        ):
            from tracehouse.cli.usage_limits import warn_crossed

            warn_crossed(ctx, ledger)
    finally:
        ledger.close()
    render_report(ctx, report)
    if report.units == 0 and not ctx.quiet and not ctx.json:
        say_where_it_looked(ctx, options.sources)
    if not report.ok:
        raise typer.Exit(1)


def say_where_it_looked(ctx: Context, sources: Mapping[str, list[Path]]) -> None:
    """A backfill that found nothing names the places it read, so a wrong home shows."""
    ctx.err.print("no agent logs found; looked in:")
    for provider, roots in sources.items():
        places = ", ".join(str(r) for r in roots) or "(none)"
        ctx.err.print(f"  {provider:<13} {places}", markup=False)
    ctx.err.print("--home DIR or --source NAME=PATH reads logs kept elsewhere")


def render_report(ctx: Context, report: SyncReport) -> None:
    if ctx.json:
        ctx.print_json(report.to_json())
        return
    for reject in report.rejects[:20]:
        ctx.err.print(f"rejected: {reject.unit_key} {reject.location}: {reject.reason}")
    if len(report.rejects) > 20:
        ctx.err.print(f"… and {len(report.rejects) - 20} more rejects (table `rejects`)")
    for failure in report.failures:
        ctx.err.print(f"failed: {failure}")
    if ctx.quiet:
        return
    s = report.statuses
    skipped = s["skipped"] + report.unchanged
    verb = "would import" if report.dry_run else "imported"
    ctx.out.print(
        f"files     {report.units} found · {report.parsed} read · {report.unchanged} unchanged"
        f" · {report.waiting} waiting for a complete line · {report.missing} missing"
    )
    ctx.out.print(
        f"sessions  {s['would import'] if report.dry_run else s['imported']} {verb}"
        f" · {s['upserted']} upserted · {skipped} skipped · {s['failed']} failed"
    )
    ctx.out.print(
        f"rows      {report.rows_written:,} written · {size(report.bytes_read)} read"
        f" · {len(report.rejects)} rejects · {report.seconds:.2f} s"
    )
    if report.embedded:
        ctx.out.print(f"vectors   {report.embedded:,} rows embedded for search by meaning")
    if report.embed_error:
        ctx.err.print(
            f"search by meaning: {report.embed_error}; the next sync embeds the rows left",
            markup=False,
        )
    if report.redactions:
        kinds = ", ".join(f"{kind} {n}" for kind, n in report.redactions.most_common())
        ctx.out.print(f"secrets   {report.redactions.total()} redacted: {kinds}", markup=False)
