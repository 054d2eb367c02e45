"""Progress on stderr through a small protocol, with a silent implementation for tests."""

from __future__ import annotations

import sys
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
    """A byte-based bar on stderr, shown only when stderr is a terminal."""

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
        )
        self._task: Any = None

    def start(self, total_bytes: int, units: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task("sync", total=total_bytes, units=units)

    def advance(self, nbytes: int) -> None:
        if self._task is not None:
            self._progress.advance(self._task, nbytes)

    def finish(self) -> None:
        self._progress.stop()


def progress_for(enabled: bool) -> ProgressSink:
    if enabled and sys.stderr.isatty():
        return RichProgress()
    return NullProgress()
