"""`tracehouse secrets …`: what a ledger holds verbatim, and redacting it in place."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from tracehouse.cli.common import Context, SourceOpt, command
from tracehouse.config import parse_source_flags
from tracehouse.errors import ConfigError

T = TypeVar("T")
app = typer.Typer(
    help="Find and redact secrets a ledger holds verbatim (stored before redaction, or with"
    " redact = false).",
    no_args_is_help=True,
)


@app.command("scan")
@command
def scan(
    ctx: Context,
    limit: Annotated[int, typer.Option("--limit", help="Secrets listed at most (0: all).")] = 50,
    home: Annotated[
        Path | None,
        typer.Option("--home", help="Preview a home's agent logs before importing them: what"
                     " a sync would redact (nothing is stored).", show_default=False),
    ] = None,
    source: SourceOpt = None,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 when secrets are found (report only).")
    ] = False,
) -> None:  # fmt: skip
    """List what `secrets redact` would replace (kind, session, row and a masked preview); with
    --home or --source, what a sync of those logs would redact. Exit 1 when it finds any, as
    a scanner a script or a hook runs does."""
    from tracehouse.redaction import ledger, redactor_for

    if limit < 0:
        raise ConfigError(f"--limit {limit}: expected 0 or more")
    redactor = redactor_for(ctx.settings, force=True)
    assert redactor is not None
    if home is not None or source:
        found = _preview(ctx, home, source, lambda store: list(ledger.scan(store, redactor)))
    else:
        found = ctx.read(lambda store: list(ledger.scan(store, redactor)))
    if ctx.json:
        ctx.print_json([f.to_json() for f in found])
        if found and not exit_zero:
            raise typer.Exit(1)
        return
    shown = found if limit == 0 else found[:limit]
    for f in shown:
        where = f.session or "(bookkeeping)"
        ctx.out.print(
            f"{f.kind:<24} {where:<14} {f.table}.{f.column} {f.row}  {f.preview}",
            markup=False,
            highlight=False,
        )
    if len(found) > len(shown):
        ctx.err.print(f"… {len(found) - len(shown)} more (--limit 0 lists them all)")
    kinds = Counter(f.kind for f in found)
    summary = ", ".join(f"{kind} {n}" for kind, n in kinds.most_common())
    if not ctx.quiet:
        held = "in those logs" if home is not None or source else "held verbatim"
        ctx.err.print(
            f"{len(found)} secrets {held}"
            + (f": {summary}" if found else "")
            + ("; `tracehouse secrets redact` replaces them" if found and held == "held verbatim"
               else "; a sync stores each as a marker" if found else ""),
            markup=False,
        )
    if found and not exit_zero:
        raise typer.Exit(1)


def _preview(
    ctx: Context, home: Path | None, source: list[str] | None, look: Callable[[Any], T]
) -> T:
    """`look` at a ledger of what a sync of `home` (or `--source`) would import, kept verbatim
    in a private directory (0700) that is removed after: the agent logs are only read."""
    from tracehouse.pipeline.progress import progress_for
    from tracehouse.pipeline.sources import sync_options
    from tracehouse.pipeline.sync import sync
    from tracehouse.state.scratch import private_dir
    from tracehouse.store import open_store

    settings = ctx.settings.with_flags(home=str(home) if home else None, redact=False)
    options = sync_options(settings, parse_source_flags(source), home_given=home is not None)
    with private_dir() as scratch:
        store = open_store(os.path.join(scratch, "preview.db"))
        try:
            sync(store, options, progress_for(False))
            return look(store)
        finally:
            store.close()


@app.command("redact")
@command
def redact(
    ctx: Context,
    no_compact: Annotated[
        bool,
        typer.Option(
            "--no-compact",
            help="Skip rewriting the store's files afterwards (SQLite: VACUUM; PostgreSQL:"
            " VACUUM FULL, which locks each table while it runs): old copies of the text"
            " stay in free pages until then.",
        ),
    ] = False,
) -> None:
    """Replace every secret the ledger holds with its marker, in place (rows, search index,
    fingerprints, cursors' states, rejects' excerpts), then rewrite the store's files so no
    old copy remains. Safe to stop and run again."""
    from tracehouse.redaction import ledger, redactor_for

    redactor = redactor_for(ctx.settings, force=True)
    assert redactor is not None
    store = ctx.store(create=False)
    try:
        report = ledger.redact(store, redactor, compact=not no_compact)
    finally:
        store.close()
    if ctx.json:
        ctx.print_json(
            {"runId": report.run_id, "sessions": report.sessions, "rewritten": report.rewritten,
             "rowsWritten": report.rows_written, "bookkeeping": report.bookkeeping,
             "redacted": dict(report.redacted), "failed": report.failed}
        )  # fmt: skip
    elif not ctx.quiet:
        kinds = ", ".join(f"{kind} {n}" for kind, n in report.redacted.most_common())
        ctx.out.print(
            f"{report.rewritten:,} of {report.sessions:,} sessions rewritten"
            f" · {report.rows_written:,} rows · {report.bookkeeping} cursors and rejects"
            f" · {report.redacted.total()} secrets" + (f": {kinds}" if kinds else ""),
            markup=False,
        )
    for failure in report.failed:
        ctx.err.print(f"failed: {failure}", markup=False)
    if report.failed:
        raise typer.Exit(1)
