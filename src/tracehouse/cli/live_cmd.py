"""`tracehouse sync live`: keep the ledger current as the agents write."""

from __future__ import annotations

import signal
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from tracehouse.cli.common import Context, HomeOpt, NoRedactOpt, SourceOpt, TokenFileOpt
from tracehouse.config import parse_source_flags

if TYPE_CHECKING:
    from tracehouse.pipeline.live import LiveStatus


def live(
    ctx: Context,
    home: HomeOpt = None,
    source: SourceOpt = None,
    poll: Annotated[
        bool, typer.Option("--poll", help="Poll the files instead of using filesystem events.")
    ] = False,
    full_scan_interval: Annotated[
        float, typer.Option("--full-scan-interval", help="Seconds between full scans.")
    ] = 300.0,
    token_file: TokenFileOpt = None,
    no_redact: NoRedactOpt = False,
    events: Annotated[
        bool,
        typer.Option(
            "--events",
            help="A line per turn as it comes in and as it ends: the session, how the prompt"
            " arrived (rpc where the agent recorded nothing), its first 80 characters. On with -v.",
        ),
    ] = False,
) -> None:
    """Catch up, then import new lines as they are written, until SIGINT or SIGTERM."""
    ctx.pushing_with(token_file)
    ctx.verbatim(no_redact)
    # watchdog and the live loop load only for this command: every other start stays lean.
    from tracehouse.pipeline.live import LiveOptions, run_live
    from tracehouse.pipeline.sources import sync_options

    settings = ctx.settings.with_flags(home=str(home) if home else None)
    options = sync_options(settings, parse_source_flags(source), home_given=home is not None)
    live = LiveOptions(full_scan_interval=full_scan_interval, poll=poll)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    err = ctx.err
    # On a terminal, one status line updated in place; elsewhere (a journal), a line per flush
    # with -v only.
    display = err.status("live: catching up…") if err.is_terminal and not ctx.quiet else None

    def on_flush(status: LiveStatus) -> None:
        if display is not None:
            display.update(_line(status))
        elif ctx.verbose:
            err.print(_line(status))

    if events or ctx.verbose:
        from tracehouse.pipeline.turn_events import printer

        options = replace(options, on_commit=printer(lambda line: err.print(line)))
    ledger = ctx.store()
    try:
        if display is not None:
            display.start()
        status = run_live(
            ledger,
            options,
            live,
            stop,
            lambda line: err.print(f"tracehouse: {line}"),
            on_flush,
        )
    finally:
        if display is not None:
            display.stop()
        ledger.close()
    if ctx.json:
        ctx.print_json(status.__dict__)
    elif not ctx.quiet:
        err.print(f"stopped: {_line(status)}")


def _line(s: LiveStatus) -> str:
    lag = f"{s.last_lag_ms} ms" if s.last_lag_ms is not None else "-"
    return (
        f"live ({s.observer}) · {s.flushes} flushes · {s.sessions} sessions updated"
        f" · {s.rows:,} rows · {s.rejects} rejects · last lag {lag}"
    )
