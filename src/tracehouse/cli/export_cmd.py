"""`tracehouse export`: the ledger, or a filter's sessions, in a format other tools read."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tracehouse.cli.common import Context, command
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
from tracehouse.exports.documents import (
    SESSION_FORMATS,
    STREAM_FILES,
    DocumentOptions,
    DocumentReport,
    export_documents,
)
from tracehouse.exports.parquet import Written, export_parquet, sessions_of
from tracehouse.reports.filters import SessionFilters, session_sql
from tracehouse.sinks.protocol import SessionStore

FORMATS = ("parquet", *SESSION_FORMATS)


@command
def export(
    ctx: Context,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Directory to write into; - for standard output (jsonl, otel, sessions-import).",
        ),
    ],
    format: Annotated[str, typer.Option("--format", help=" | ".join(FORMATS))] = "parquet",
    provider: ProvidersOpt = None,
    project: ProjectOpt = None,
    model: ModelOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    subagents: SubagentsOpt = True,
    label: LabelOpt = None,
    utc: UtcOpt = False,
    context: Annotated[
        bool,
        typer.Option("--context", help="markdown/html: only what the model saw (no host notices)."),
    ] = False,
    since_last: Annotated[
        bool,
        typer.Option(
            "--since-last",
            help="Only the sessions changed since the last export of this format to --out.",
        ),
    ] = False,
) -> None:
    """Write the ledger (or the sessions the filters keep) as files: parquet (one per table),
    markdown or html (one per session; html adds index.html), jsonl (sessions.import items,
    one per line), otel (OTLP JSON traces, one per line) or sessions-import (requests of up to
    100 sessions, one per line, for `tracehouse import` or a gateway)."""
    if format not in FORMATS:
        raise ConfigError(f"--format {format!r}: one of {', '.join(FORMATS)}")
    to_stdout = str(out) == "-"
    if to_stdout and format not in STREAM_FILES:
        raise ConfigError(f"--out -: only {', '.join(STREAM_FILES)} go to standard output")
    if not to_stdout and out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: not a directory")
    if format == "parquet" and (context or since_last):
        raise ConfigError("--context and --since-last: not for --format parquet, which writes"
                          " whole tables")  # fmt: skip
    options = None if format == "parquet" else DocumentOptions(format, context, since_last, utc)

    def write(ledger: SessionStore) -> list[Written] | DocumentReport:
        found = session_filters(
            ledger, provider=provider, project=project, model=model, since=since, until=until,
            subagents=subagents, label=label, utc=utc,
        )  # fmt: skip
        if options is not None:
            stream = sys.stdout.buffer if to_stdout else None
            return export_documents(ledger, out, options, found, stream)
        wanted = None if found == SessionFilters() else sessions_of(ledger, *session_sql(found))
        return export_parquet(ledger, out, session_ids=wanted)

    done = ctx.read(write)
    if isinstance(done, DocumentReport):
        if to_stdout:  # standard output holds the export itself
            sys.stdout.flush()
            ctx.err.print(f"{done.written:,} sessions → standard output ({done.format})")
            return
        _report_documents(ctx, done)
        return
    if ctx.json:
        ctx.print_json([{"table": w.table, "path": str(w.path), "rows": w.rows} for w in done])
        return
    if not ctx.quiet:
        for w in done:
            typer.echo(f"{w.rows:>9,}  {w.path}")


def _report_documents(ctx: Context, report: DocumentReport) -> None:
    if ctx.json:
        ctx.print_json(
            {"format": report.format, "out": str(report.out), "selected": report.selected,
             "written": report.written, "since": report.since,
             "files": [str(p) for p in report.files]}
        )  # fmt: skip
        return
    if ctx.quiet:
        return
    since = f", changed since {report.since}" if report.since else ""
    typer.echo(
        f"{report.written:,} of {report.selected:,} sessions{since} → {report.out}"
        f" ({len(report.files):,} file{'' if len(report.files) == 1 else 's'}, {report.format})"
    )
