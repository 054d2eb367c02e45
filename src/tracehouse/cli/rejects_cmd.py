"""`tracehouse rejects`: what the pipeline refused, where, why, and how to read it again."""

from __future__ import annotations

from typing import Annotated

import typer

from tracehouse.cli.common import Context, LimitOpt, ProviderOpt, command
from tracehouse.store.reads import list_rejects

# What to do about a reject: the source is read again when it changes, so a fixed file is
# picked up by the next run; --full reads every file again, changed or not.
ADVICE = (
    "Each is re-read when its file changes: fix or remove the line, then `tracehouse sync"
    " backfill`; `tracehouse sync backfill --source PROVIDER --full` reads everything again."
    " A reject resolves itself once its location reads cleanly; `--acknowledge FILE` resolves"
    " those of a file you have looked at and will not fix."
)


@command
def rejects(
    ctx: Context,
    provider: ProviderOpt = None,
    resolved: Annotated[
        bool, typer.Option("--resolved", help="Those that later read cleanly instead.")
    ] = False,
    limit: LimitOpt = 100,
    acknowledge: Annotated[
        str | None,
        typer.Option(
            "--acknowledge",
            metavar="FILE",
            help="Mark every reject of FILE resolved: looked at, nothing to fix.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Records that could not be imported: file, line or key, reason, and what to do."""
    if acknowledge is not None:
        from tracehouse.pipeline.requests import acknowledge as resolve_by_hand

        done = ctx.read(lambda ledger: resolve_by_hand(ledger, acknowledge))
        if ctx.json:
            ctx.print_json({"acknowledged": done, "file": acknowledge})
        elif not ctx.quiet:
            ctx.out.print(f"{done} reject(s) of {acknowledge} marked resolved", markup=False)
        return
    rows = ctx.read(lambda ledger: list_rejects(ledger, provider, resolved, limit))
    if ctx.json:
        ctx.print_json(rows)
        return
    from rich.text import Text

    out = ctx.out
    if not rows:
        out.print("no resolved rejects" if resolved else "no rejects: everything read imported")
        return
    for r in rows:
        when = f"resolved {r['resolved_at'][:16]}" if r["resolved_at"] else r["created_at"][:16]
        out.print(Text.assemble((str(r["unit_key"]), "bold"),
                                f" {r['location']}  ({r['source_provider']}, {when})"))  # fmt: skip
        out.print(f"  {r['reason']}", markup=False)
        if r["raw_excerpt"]:
            out.print(f"  > {r['raw_excerpt'][:160]}", markup=False)
    if not resolved:
        out.print(f"\n{len(rows)} unresolved. {ADVICE}")
