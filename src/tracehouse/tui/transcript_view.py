"""The transcript pane: a session's text as `sessions show` renders it, wrapped to the pane and
drawn a line at a time, so a session of thousands of messages opens and scrolls as fast as a
short one.

Textual's `TextArea` (read-only) was the first pane: it sums the height of every wrapped line
for each line it draws, and joins the whole text once per line too, so a page of a 3,000-message
session (33,000 lines) took 230 ms a key. Here the text is wrapped once per width, and a line
is drawn from a list: what a key costs no longer grows with the session.
"""

from __future__ import annotations

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

# A line's look by how `exports/transcript.render` starts it; its wrapped parts keep it.
_LOOKS: tuple[tuple[str, Style], ...] = (
    ("▶ ", Style(bold=True, reverse=True)),  # the message a search hit opened at
    ("# ", Style(bold=True)),
    ("## ", Style(bold=True, underline=True)),
    ("    │", Style(dim=True)),  # a call's output
    ("  │", Style(dim=True)),
    ("▸ ", Style(dim=True, italic=True)),  # what is folded
    ("> ", Style(italic=True)),  # thinking, unfolded
    ("  → ", Style(bold=True)),  # a tool call
    ("… ", Style(dim=True)),
)
_PLAIN = Style()
TAB = 4


class TranscriptView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    TranscriptView { overflow-x: hidden; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[str] = []
        self._looks: list[Style] = []
        self._rows: list[tuple[str, Style, int]] = []  # wrapped: (text, look, source line)
        self._wrapped_at = 0

    @property
    def text(self) -> str:
        return "\n".join(self._lines)

    def load_text(self, text: str, *, at_line: int = 0) -> None:
        """Show `text` with its line `at_line` at the top."""
        self._lines = text.expandtabs(TAB).splitlines()
        self._looks = [_look(line) for line in self._lines]
        self._wrapped_at = 0
        self._wrap()
        top = next((n for n, row in enumerate(self._rows) if row[2] >= at_line), 0)
        self.scroll_to(y=top, animate=False, immediate=True)

    def _width(self) -> int:
        return max(10, self.scrollable_content_region.width or 80)

    def _wrap(self) -> None:
        width = self._width()
        if width == self._wrapped_at:
            return
        rows: list[tuple[str, Style, int]] = []
        for n, (line, look) in enumerate(zip(self._lines, self._looks, strict=True)):
            rows.extend((part, look, n) for part in wrapped(line, width))
        self._rows, self._wrapped_at = rows, width
        self.virtual_size = Size(width, len(rows))
        self.refresh()

    def on_resize(self) -> None:
        top = self._rows[int(self.scroll_y)][2] if self._rows else 0
        self._wrap()
        self.scroll_to(y=next((n for n, r in enumerate(self._rows) if r[2] >= top), 0),
                       animate=False, immediate=True)  # fmt: skip

    # A page at a time, as a pager moves: at once, not in an animation a key waits behind.
    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_page_up(self) -> None:
        self.scroll_page_up(animate=False)

    def action_scroll_home(self) -> None:
        self.scroll_home(animate=False)

    def action_scroll_end(self) -> None:
        self.scroll_end(animate=False)

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_y) + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if not 0 <= index < len(self._rows):
            return Strip.blank(width, base)
        text, look, _ = self._rows[index]
        return Strip([Segment(text, base + look)]).extend_cell_length(width, base).crop(0, width)


def _look(line: str) -> Style:
    return next((style for start, style in _LOOKS if line.startswith(start)), _PLAIN)


def wrapped(line: str, width: int) -> list[str]:
    """`line` in parts of at most `width` cells, broken after a space where one is near the end
    (a word is cut only when it is longer than the line)."""
    if len(line) <= width and (line.isascii() or cell_len(line) <= width):
        return [line]
    if not line.isascii():  # wide characters: cut by cells
        return chop_cells(line, width)
    parts = []
    while len(line) > width:
        cut = line.rfind(" ", width // 2, width + 1)
        cut = width if cut <= 0 else cut + 1
        parts.append(line[:cut])
        line = line[cut:]
    parts.append(line)
    return parts
