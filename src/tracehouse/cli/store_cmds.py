"""`tracehouse store …`: create, describe, migrate, verify and copy the ledger, and sum its usage
rollup again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from tracehouse.cli.common import Context, command
from tracehouse.errors import ConfigError

if TYPE_CHECKING:
    from tracehouse.upkeep.copy import CopyReport
    from tracehouse.upkeep.verify import VerifyReport

app = typer.Typer(help="Create and inspect the ledger.", no_args_is_help=True)


@app.command("init")
@command
def init(ctx: Context) -> None:
    """Create the ledger (or upgrade it in place) and print where it is."""
    ledger = ctx.store(create=True)
    info = ledger.info()
    ledger.close()
    if ctx.json:
        ctx.print_json({"store": info.location, "schemaVersion": info.schema_version})
    elif not ctx.quiet:
        ctx.out.print(f"ledger ready: {info.location} (schema version {info.schema_version})")


@app.command("info")
@command
def info(ctx: Context) -> None:
    """Path, schema version and row counts per table."""
    ledger = ctx.store(create=False)
    details = ledger.info()
    ledger.close()
    if ctx.json:
        ctx.print_json(
            {
                "store": details.location,
                "backend": details.backend,
                "schemaVersion": details.schema_version,
                "rows": dict(details.row_counts),
            }
        )
        return
    ctx.out.print(f"store           {details.location}")
    ctx.out.print(f"backend         {details.backend}")
    ctx.out.print(f"schema version  {details.schema_version}")
    from rich.table import Table

    table = Table("table", "rows", box=None, pad_edge=False)
    for name, count in details.row_counts.items():
        table.add_row(name, f"{count:,}")
    ctx.out.print(table)


@app.command("migrate")
@command
def migrate(
    ctx: Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the pending migrations; change nothing.")
    ] = False,
) -> None:
    """Bring the ledger's schema up to date (every command also does it when it opens the
    ledger; this does it on purpose, e.g. before a team's machines upgrade)."""
    ledger = ctx.store(create=False, migrate=False)
    try:
        before = ledger.schema_version
        steps = ledger.pending_migrations() if dry_run else ledger.migrate()
        after = ledger.schema_version
    finally:
        ledger.close()
    if ctx.json:
        ctx.print_json(
            {
                "store": ledger.location,
                "dryRun": dry_run,
                "schemaVersion": {"from": before, "to": after},
                "migrations": steps,
            }
        )
        return
    if ctx.quiet:
        return
    if not steps:
        ctx.out.print(f"{ledger.location}: schema version {before}, up to date")
        return
    verb = "would apply" if dry_run else "applied"
    ctx.out.print(f"{ledger.location}: schema version {before}; {verb}:")
    for step in steps:
        ctx.out.print(f"  {step}", markup=False, highlight=False)
    if not dry_run:
        ctx.out.print(f"now at schema version {after}")


@app.command("rebuild-usage")
@command
def rebuild_usage(ctx: Context) -> None:
    """Sum a SQLite ledger's usage rollup again from its turns (when `store verify` finds it
    off: rows changed by hand in the file)."""
    from tracehouse.store.sqlite.store import SqliteStore

    ledger = ctx.store(create=False)
    try:
        if not isinstance(ledger, SqliteStore):
            raise ConfigError(f"{ledger.location}: only a SQLite ledger keeps a usage rollup"
                              f" ({ledger.backend} sums the turns for every report)")  # fmt: skip
        rows = ledger.rebuild_usage()
    finally:
        ledger.close()
    if ctx.json:
        ctx.print_json({"store": ledger.location, "usageRows": rows})
    elif not ctx.quiet:
        summed = f"usage rollup summed again from the turns ({rows:,} rows)"
        ctx.out.print(f"{ledger.location}: {summed}")


@app.command("verify")
@command
def verify(
    ctx: Context,
    sample: Annotated[
        int | None,
        typer.Option("--sample", help="Check N sessions chosen at random (default: all).", min=1),
    ] = None,
) -> None:
    """Recompute row fingerprints, find orphans and dangling links, check session totals."""
    from tracehouse.upkeep.verify import verify_store

    report = ctx.read(lambda ledger: verify_store(ledger, sample))
    if ctx.json:
        ctx.print_json(report.to_json())
    elif not ctx.quiet:
        render_verify(ctx, report)
    if not report.ok:
        raise typer.Exit(1)


def render_verify(ctx: Context, report: VerifyReport) -> None:
    from rich.table import Table

    from tracehouse.upkeep.verify import CURSORS_NOTE

    ctx.out.print(f"checked {report.sampled:,} of {report.sessions:,} sessions and their rows")
    table = Table("check", "checked", "problems", box=None, pad_edge=False)
    for check in report.checks:
        mark = "" if not check.problems else " (fault)" if check.fails else " (note)"
        table.add_row(check.name, f"{check.checked:,}", f"{check.problems:,}{mark}")
    ctx.out.print(table)
    for check in report.checks:  # the notes' examples (lineage elsewhere) only with -v
        for example in check.examples if check.fails or ctx.verbose else ():
            ctx.out.print(f"{check.name}: {example}", markup=False, highlight=False)
    ctx.out.print(f"{report.cursors:,} cursors {CURSORS_NOTE}")
    if report.ok:
        ctx.out.print("ledger verified: no faults")
    else:
        ctx.out.print(
            "faults found: re-read the sessions named above with"
            " `tracehouse sync backfill --full`, then verify again"
        )


@app.command("copy")
@command
def copy(
    ctx: Context,
    source: Annotated[
        str,
        typer.Option("--from", help="The ledger to read: a SQLite file or a postgresql:// DSN."),
    ],
    target: Annotated[
        str, typer.Option("--to", help="The ledger to write (created if it does not exist).")
    ],
) -> None:
    """Copy a ledger into another store (SQLite ↔ PostgreSQL); re-run to resume or to refresh."""
    from tracehouse.store import open_store
    from tracehouse.upkeep.copy import copy_store

    reader = open_store(source, create=False)
    try:
        writer = open_store(target, create=True)
        try:
            with _progress(ctx) as advance:
                report = copy_store(reader, writer, progress=advance)
        finally:
            writer.close()
    finally:
        reader.close()
    render_copy(ctx, report, reader.location, writer.location)
    if not report.ok:
        raise typer.Exit(1)


@contextmanager
def _progress(ctx: Context) -> Iterator[Callable[[int, int], None] | None]:
    """A bar of sessions copied, on a terminal only."""
    if ctx.quiet or ctx.json or not ctx.err.is_terminal:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=ctx.err, transient=True) as bar:
        task = bar.add_task("copying sessions", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def render_copy(ctx: Context, report: CopyReport, source: str, target: str) -> None:
    if ctx.json:
        ctx.print_json(
            {
                "from": source,
                "to": target,
                "runId": report.run_id,
                "sessions": report.sessions,
                "copied": report.copied,
                "unchanged": report.unchanged,
                "failed": [r.to_json() for r in report.failed],
                "rowsWritten": report.rows_written,
                "watermarks": report.watermarks,
                "logRows": report.log_rows,
                "rows": {
                    name: {"from": count, "to": report.target_counts.get(name, 0)}
                    for name, count in report.source_counts.items()
                },
            }
        )
        return
    if ctx.quiet:
        return
    out = ctx.out
    out.print(f"copied {source} → {target}")
    out.print(
        f"sessions: {report.copied:,} copied, {report.unchanged:,} already there"
        f" ({report.sessions:,} in all), {report.rows_written:,} rows written;"
        f" {report.watermarks:,} watermarks, {report.log_rows:,} run-log rows added"
    )
    from rich.table import Table

    table = Table("table", "from", "to", box=None, pad_edge=False)
    differs = False
    for name, count in report.source_counts.items():
        there = report.target_counts.get(name, 0)
        differs |= there != count
        table.add_row(name, f"{count:,}", f"{there:,}" + ("" if there == count else " *"))
    out.print(table)
    if differs:
        out.print("* the target holds rows of its own too (its run log includes this copy)")
    for failure in report.failed:
        ctx.err.print(f"not copied: {failure.source_session_id}: {failure.reason}")


@app.command("datasette")
@command
def datasette(ctx: Context) -> None:
    """Print Datasette metadata for a SQLite ledger: bookkeeping tables hidden, facets set.
    Use: tracehouse store datasette > th.json && datasette LEDGER -m th.json"""
    from pathlib import Path

    from tracehouse.errors import ConfigError
    from tracehouse.store.sqlite.datasette import metadata

    ledger = ctx.store(create=False)
    location, backend = ledger.location, ledger.backend
    ledger.close()
    if backend != "sqlite":
        raise ConfigError(f"{location}: Datasette reads SQLite ledgers; this one is {backend}")
    ctx.print_json(metadata(Path(location)))
