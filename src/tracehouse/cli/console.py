"""The consoles every command prints through: whatever a ledger holds is shown with its
control characters escaped (a workspace path holding `ESC ] 0 ;` would retitle the terminal,
`ESC [ 2 J` clear it, U+202E turn a line around), while rich's own styling still reaches a
terminal. Markup is off: a `[/]` in a title is text, not a rich tag that fails."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def console(**options: Any) -> Console:
    return _console_class()(markup=False, highlight=False, **options)


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console  # ~80 ms: loaded when something is printed
    from rich.segment import Segment

    from tracehouse.shown import escaped

    class LedgerConsole(Console):
        # Every segment of text passes here on its way out; rich's control segments (cursor
        # moves of a progress bar) and the styles it renders around text are its own.
        def _render_buffer(self, buffer: Any) -> str:
            return super()._render_buffer(
                segment if segment.control else Segment(escaped(segment.text), segment.style)
                for segment in buffer
            )

    return LedgerConsole
