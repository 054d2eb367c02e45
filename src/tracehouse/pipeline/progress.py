"""Progress on stderr through a small protocol, with a silent implementation for tests."""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol


class ProgressSink(Protocol):
    def start(self, total_bytes: int, units: int) -> None: ...

    def advance(self, nbytes: int) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    def start(self, total_bytes: int, units: int) -> None:
        pass

    def advance(self, nbytes: int) -> None:
        pass

    def finish(self) -> None:
        pass


class RichProgress:
    """A byte-based bar on stderr, shown only when stderr is a terminal.

    Redrawn as bytes are read, at most every REDRAW_SECONDS, rather than by rich's refresh
    thread: a process with no other thread can fork its parsers
    (`tracehouse.processes.start_method`)."""

    REDRAW_SECONDS = 0.1

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]sync[/] {task.fields[units]} files"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
            auto_refresh=False,
        )
        self._task: Any = None
        self._drawn = 0.0

    def start(self, total_bytes: int, units: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task("sync", total=total_bytes, units=units)

    def advance(self, nbytes: int) -> None:
        if self._task is not None:
            self._progress.advance(self._task, nbytes)
            now = time.monotonic()
            if now - self._drawn >= self.REDRAW_SECONDS:
                self._drawn = now
                self._progress.refresh()

    def finish(self) -> None:
        self._progress.stop()


def progress_for(enabled: bool) -> ProgressSink:
    if enabled and sys.stderr.isatty():
        return RichProgress()
    return NullProgress()
