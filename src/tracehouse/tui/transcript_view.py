"""The transcript pane: a session's text as `sessions show` renders it, wrapped to the pane and
drawn a line at a time, so a session of thousands of messages opens and scrolls as fast as a
short one.

Textual's `TextArea` (read-only) was the first pane: it sums the height of every wrapped line
for each line it draws, and joins the whole text once per line too, so a page of a 3,000-message
session (33,000 lines) took 230 ms a key. Here the text is wrapped once per width, and a line
is drawn from a list: what a key costs no longer grows with the session. Fenced code is
highlighted (Pygments, in the terminal's own colours) when a line of its block is first drawn,
and an edit's diff is coloured.
"""

from __future__ import annotations

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tracehouse.exports.diffs import line_kind
from tracehouse.exports.transcript import DIFF_MARK

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
DIFF = "    " + DIFF_MARK  # an edit's diff line, under its call
_DIFF_LOOKS = {
    "add": Style(color="green"),
    "del": Style(color="red"),
    "hunk": Style(color="cyan"),
    "meta": Style(bold=True),
    "ctx": Style(dim=True),
}
FENCE = "```"
HIGHLIGHT_MOST = 400  # lines of one block: a longer one is shown plain


class TranscriptView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    TranscriptView { overflow-x: hidden; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[str] = []
        self._looks: list[Style] = []
        self._rows: list[tuple[int, int, int]] = []  # wrapped: (source line, start, end)
        self._wrapped_at = 0
        self._blocks: dict[int, tuple[int, int, str]] = {}  # line → its code block
        self._painted: dict[int, Text] = {}  # highlighted lines, by line
        self._dark = True  # the theme they were highlighted for

    @property
    def text(self) -> str:
        return "\n".join(self._lines)

    def load_text(self, text: str, *, at_line: int = 0) -> None:
        """Show `text` with its line `at_line` at the top."""
        self._lines = text.expandtabs(TAB).splitlines()
        self._looks = [_look(line) for line in self._lines]
        self._blocks, self._painted = code_blocks(self._lines), {}
        self._wrapped_at = 0
        self._wrap()
        top = next((n for n, row in enumerate(self._rows) if row[0] >= at_line), 0)
        self.scroll_to(y=top, animate=False, immediate=True)

    def _width(self) -> int:
        return max(10, self.scrollable_content_region.width or 80)

    def _wrap(self) -> None:
        width = self._width()
        if width == self._wrapped_at:
            return
        rows: list[tuple[int, int, int]] = []
        for n, line in enumerate(self._lines):
            rows.extend((n, start, end) for start, end in wrapped(line, width))
        self._rows, self._wrapped_at = rows, width
        self.virtual_size = Size(width, len(rows))
        self.refresh()

    def on_resize(self) -> None:
        top = self._rows[int(self.scroll_y)][0] if self._rows else 0
        self._wrap()
        self.scroll_to(y=next((n for n, r in enumerate(self._rows) if r[0] >= top), 0),
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
        n, start, end = self._rows[index]
        painted = self._paint(n) if n in self._blocks else None
        if painted is not None:
            segments = [Segment(seg.text, base + seg.style if seg.style else base)
                        for seg in painted[start:end].render(self.app.console)]  # fmt: skip
        else:
            segments = [Segment(self._lines[n][start:end], base + self._looks[n])]
        # one strip, padded here: a strip made and then padded and cropped is three, each with
        # caches of its own, for every line drawn
        cells = Segment.get_line_length(segments)
        if cells > width:
            return Strip(segments, cells).crop(0, width)
        segments.append(Segment(" " * (width - cells), base))
        return Strip(segments, width)

    def _paint(self, n: int) -> Text | None:
        """Line `n` of a code block, highlighted (its whole block once, when first drawn)."""
        dark = self.app.current_theme.dark
        if dark != self._dark:  # another theme (ctrl+p): its colours
            self._painted, self._dark = {}, dark
        if n not in self._painted:
            first, last, language = self._blocks[n]
            plain = self._lines[first:last]
            lines = highlighted("\n".join(plain), language, dark)
            if lines is None or len(lines) != len(plain):
                lines = [Text(line) for line in plain]
            self._painted.update(zip(range(first, last), lines, strict=True))
        return self._painted[n]


def _look(line: str) -> Style:
    if line.startswith(DIFF):
        return _DIFF_LOOKS[line_kind(line[len(DIFF) :])]
    return next((style for start, style in _LOOKS if line.startswith(start)), _PLAIN)


def code_blocks(lines: list[str]) -> dict[int, tuple[int, int, str]]:
    """The lines inside each fenced block with a language (```python … ```) of a message's text,
    each mapped to its block's (first, end, language); a block cut short ends at the next
    heading or call."""
    blocks: dict[int, tuple[int, int, str]] = {}
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.startswith(FENCE) and line[3:].strip():
            first, end = n + 1, n + 1
            while end < len(lines) and not lines[end].startswith((FENCE, "## ", "  → ")):
                end += 1
            if 0 < end - first <= HIGHLIGHT_MOST:
                language = line[3:].strip().split()[0]
                blocks.update((k, (first, end, language)) for k in range(first, end))
            n = end
        n += 1
    return blocks


def highlighted(code: str, language: str, dark: bool) -> list[Text] | None:
    """`code`'s lines coloured by Pygments in the terminal's ANSI colours (Rich's ANSI themes,
    which follow the terminal's own palette, light or dark); None for a language Pygments does
    not know."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound
    from rich.syntax import ANSI_DARK, ANSI_LIGHT

    try:
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    theme = ANSI_DARK if dark else ANSI_LIGHT
    text = Text()
    for token, value in lexer.get_tokens(code):
        kind = token
        while kind not in theme and kind.parent is not None:
            kind = kind.parent
        text.append(value, theme.get(kind))
    return list(text.split("\n", allow_blank=True))


def wrapped(line: str, width: int) -> list[tuple[int, int]]:
    """`line` in parts of at most `width` cells, as (start, end) offsets, broken after a space
    where one is near the end (a word is cut only when it is longer than the line)."""
    if len(line) <= width and (line.isascii() or cell_len(line) <= width):
        return [(0, len(line))]
    if not line.isascii():  # wide characters: cut by cells
        parts, start = [], 0
        for piece in chop_cells(line, width):
            parts.append((start, start + len(piece)))
            start += len(piece)
        return parts
    parts, start = [], 0
    while len(line) - start > width:
        cut = line.rfind(" ", start + width // 2, start + width)  # the part keeps its space
        cut = start + width if cut <= start else cut + 1
        parts.append((start, cut))
        start = cut
    parts.append((start, len(line)))
    return parts
