"""`tracehouse index embeddings`: make the vectors of search by meaning, or make them again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from tracehouse.cli.common import Context, command

app = typer.Typer(help="Build the ledger's search indexes.", no_args_is_help=True)


@app.command("embeddings")
@command
def embeddings(
    ctx: Context,
    model: Annotated[
        str | None,
        typer.Option("--model", help="wordllama, model2vec:FOLDER_OR_HUB_ID, openai:MODEL@URL"
                     " (default: the `embeddings` setting).", show_default=False),
    ] = None,
    again: Annotated[
        bool, typer.Option("--again", help="Embed every row again, not only those waiting.")
    ] = False,
    allow_download: Annotated[
        bool,
        typer.Option("--allow-download", help="Fetch a model2vec model from the Hugging Face"
                     " hub if it is not in the hub's cache on this machine."),
    ] = False,
) -> None:  # fmt: skip
    """Embed the rows that have no vectors yet (a model other than the ledger's: all of them)."""
    from tracehouse.search.embedders import Lazy

    settings = ctx.settings.with_flags(embeddings=model)
    wanted = Lazy(settings.embeddings, allow_download=allow_download)
    if not wanted.enabled:
        raise typer.BadParameter(
            'embeddings = "none": name a model with --model', param_hint="--model"
        )
    ledger = ctx.store(create=False)
    try:
        embedder = wanted.model()
        progress = _progress(ctx) if ctx.err.is_terminal and not ctx.quiet else None
        done = ledger.embed_backlog(embedder, progress, again=again)
        status = ledger.embedding_status()
    finally:
        ledger.close()
    if ctx.json:
        ctx.print_json({"embeddedRows": done, **status.to_json()})
        return
    if not ctx.quiet:
        ctx.out.print(
            f"{done:,} rows embedded · {status.passages:,} passages, {status.vectors:,} vectors"
            f" · {status.model}",
            markup=False,
        )


def _progress(ctx: Context) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        ctx.err.print(f"embedded {done:,} of {total:,} rows", end="\r", markup=False)

    return show
