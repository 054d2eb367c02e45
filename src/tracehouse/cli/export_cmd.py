"""`tracehouse export`: the ledger, or a filter's sessions, in a format other tools read."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

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
from tracehouse.exports.selection import parse_mode, write_manifest
from tracehouse.redaction import redactor_for
from tracehouse.redaction.rows import ExportTally
from tracehouse.reports.filters import SessionFilters, session_sql
from tracehouse.store.protocol import SessionStore

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
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            help="The files' mode, octal (the directory, if new, lets the same people in).",
        ),
    ] = "0600",
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
    try:
        file_mode = parse_mode(mode)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    # What the ledger still holds verbatim (synced with redact = false, or before redaction)
    # is redacted on the way out; with redact = false, an export is as verbatim as the ledger.
    redactor = redactor_for(ctx.settings)
    options = (
        None
        if format == "parquet"
        else DocumentOptions(format, context, since_last, utc, file_mode, redactor)
    )
    tally = ExportTally()

    def write(ledger: SessionStore) -> list[Written] | DocumentReport:
        found = session_filters(
            ledger, provider=provider, project=project, model=model, since=since, until=until,
            subagents=subagents, label=label, utc=utc,
        )  # fmt: skip
        if options is not None:
            stream = sys.stdout.buffer if to_stdout else None
            return export_documents(ledger, out, options, found, stream)
        wanted = None if found == SessionFilters() else sessions_of(ledger, *session_sql(found))
        return export_parquet(
            ledger, out, session_ids=wanted, redactor=redactor, file_mode=file_mode, tally=tally
        )

    done = ctx.read(write)
    if not to_stdout:
        _manifest(out, format, done, tally, file_mode)
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


def _manifest(
    out: Path, format: str, done: list[Written] | DocumentReport, tally: ExportTally, mode: int
) -> None:
    """What the export holds and what of it is redacted, beside it."""
    from tracehouse import __version__
    from tracehouse.model.contract import now_iso

    if isinstance(done, DocumentReport):
        tally = done.tally
        contents: dict[str, Any] = {
            "sessions": done.written,
            "files": sorted(p.name for p in done.files),
        }
    else:
        contents = {"tables": {w.table: {"file": w.path.name, "rows": w.rows} for w in done}}
    write_manifest(
        out,
        {
            "format": format,
            "exportedAt": now_iso(),
            "tracehouse": __version__,
            **contents,
            "secrets": {
                "markers": dict(sorted(tally.markers.items())),
                "redactedByExport": dict(sorted(tally.redacted.items())),
            },
        },
        mode,
    )


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
