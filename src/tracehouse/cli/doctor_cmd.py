"""`tracehouse doctor`: every check on one screen, exit 1 when any fails."""

from __future__ import annotations

import typer

from tracehouse.cli.common import Context, HomeOpt, SourceOpt, command
from tracehouse.config import parse_source_flags

MARKS = {"ok": "[green]ok[/]  ", "warn": "[yellow]warn[/]", "fail": "[red]fail[/]"}


@command
def doctor(ctx: Context, home: HomeOpt = None, source: SourceOpt = None) -> None:
    """Check the ledger, the sources and this machine; each finding says how to fix it."""
    from rich.markup import escape

    from tracehouse.doctor import diagnose
    from tracehouse.pipeline.sources import resolve_sources

    settings = ctx.settings.with_flags(home=str(home) if home else None)
    roots = resolve_sources(settings, parse_source_flags(source), home_given=home is not None)
    findings = diagnose(settings.store, roots, embeddings=settings.embeddings)
    failed = any(f.status == "fail" for f in findings)
    if ctx.json:
        ctx.print_json({"ok": not failed, "checks": [f.to_json() for f in findings]})
    elif not ctx.quiet:
        for f in findings:
            ctx.out.print(f"{MARKS[f.status]}  [bold]{escape(f.check)}[/]: ", end="", markup=True)
            ctx.out.print(f.detail, markup=False, highlight=False)
            if f.fix and f.status != "ok":
                ctx.out.print(f"        fix: {f.fix}", markup=False, highlight=False)
        counts = {s: sum(f.status == s for f in findings) for s in MARKS}
        ctx.out.print(f"{counts['ok']} ok · {counts['warn']} warn · {counts['fail']} fail")
    if failed:
        raise typer.Exit(1)
