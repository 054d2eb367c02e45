"""`tracehouse browse`: the ledger in the terminal (`tui/browse.py`)."""

from __future__ import annotations

from tracehouse.cli.common import Context, command


@command
def browse(ctx: Context) -> None:
    """Browse the sessions in the terminal: search as you type, read a transcript beside the
    list, and keys to resume, copy a label or open a session in the browser."""
    from tracehouse.search.embedders import Lazy
    from tracehouse.store.location import parse_store
    from tracehouse.tui.browse import Browse

    ledger = ctx.store(create=False)
    try:
        shown = parse_store(ctx.settings.store).shown
        Browse(ledger, ctx.settings.store, Lazy(ctx.settings.embeddings), shown).run()
    finally:
        ledger.close()
