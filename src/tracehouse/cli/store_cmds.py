"""`tracehouse store …`: create and describe the ledger."""

from __future__ import annotations

import typer

from tracehouse.cli.common import Context, command

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
