"""`tracehouse export`: the ledger, or a filter's sessions, in a format other tools read."""

from __future__ import annotations

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
from tracehouse.exports.parquet import Written, export_parquet, sessions_of
from tracehouse.reports.filters import SessionFilters, session_sql
from tracehouse.sinks.protocol import SessionStore

FORMATS = ("parquet",)


@command
def export(
    ctx: Context,
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory to write into.")],
    format: Annotated[str, typer.Option("--format", help=" | ".join(FORMATS))] = "parquet",
    provider: ProvidersOpt = None,
    project: ProjectOpt = None,
    model: ModelOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    subagents: SubagentsOpt = True,
    label: LabelOpt = None,
    utc: UtcOpt = False,
) -> None:
    """Write the ledger (or the sessions the filters keep) as files: parquet, one per table."""
    if format not in FORMATS:
        raise ConfigError(f"--format {format!r}: one of {', '.join(FORMATS)}")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: not a directory")

    def write(ledger: SessionStore) -> list[Written]:
        found = session_filters(
            ledger, provider=provider, project=project, model=model, since=since, until=until,
            subagents=subagents, label=label, utc=utc,
        )  # fmt: skip
        wanted = None if found == SessionFilters() else sessions_of(ledger, *session_sql(found))
        return export_parquet(ledger, out, session_ids=wanted)

    written = ctx.read(write)
    if ctx.json:
        ctx.print_json([{"table": w.table, "path": str(w.path), "rows": w.rows} for w in written])
        return
    if not ctx.quiet:
        for w in written:
            typer.echo(f"{w.rows:>9,}  {w.path}")
