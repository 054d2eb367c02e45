"""`tracehouse sync live`: keep the ledger current as the agents write."""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, Annotated

import typer

from tracehouse.cli.common import Context, HomeOpt, SourceOpt
from tracehouse.config import parse_source_flags
from tracehouse.pipeline.sources import sync_options

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
) -> None:
    """Catch up, then import new lines as they are written, until SIGINT or SIGTERM."""
    # watchdog and the live loop load only for this command: every other start stays lean.
    from tracehouse.pipeline.live import LiveOptions, run_live

    settings = ctx.settings.with_flags(home=str(home) if home else None)
    options = sync_options(settings, parse_source_flags(source), home_given=home is not None)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    ledger = ctx.store()
    try:
        status = run_live(
            ledger,
            options,
            LiveOptions(full_scan_interval=full_scan_interval, poll=poll),
            stop,
            lambda line: ctx.err.print(f"tracehouse: {line}"),
            _printer(ctx),
        )
    finally:
        ledger.close()
    if ctx.json:
        ctx.print_json(status.__dict__)
    elif not ctx.quiet:
        ctx.err.print(f"stopped: {_line(status)}")


def _printer(ctx: Context):  # type: ignore[no-untyped-def]
    def show(status: LiveStatus) -> None:
        if ctx.verbose:
            ctx.err.print(_line(status))

    return show


def _line(s: LiveStatus) -> str:
    lag = f"{s.last_lag_ms} ms" if s.last_lag_ms is not None else "-"
    return (
        f"live ({s.observer}) · {s.flushes} flushes · {s.sessions} sessions updated"
        f" · {s.rows:,} rows · {s.rejects} rejects · last lag {lag}"
    )
