"""The transcript pane of `browse`: lines wrapped to the pane without losing a character, code
blocks highlighted, an edit's diff coloured, and a long session drawn a line at a time."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.app import App, ComposeResult

from tracehouse.exports.transcript import DIFF_MARK
from tracehouse.tui.transcript_view import TranscriptView, code_blocks, highlighted, wrapped


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"))), st.integers(10, 120))
def test_a_wrapped_line_is_the_line_in_parts_that_fit(line: str, width: int) -> None:
    parts = wrapped(line, width)
    assert "".join(line[a:b] for a, b in parts) == line
    assert all(cell_len(line[a:b]) <= width for a, b in parts)
    assert [a for a, _ in parts[1:]] == [b for _, b in parts[:-1]]  # nothing skipped


def test_a_space_just_past_the_width_is_no_place_to_break() -> None:
    line = "a" * 10 + " " + "b" * 20
    assert [line[a:b] for a, b in wrapped(line, 10)] == ["a" * 10, " " + "b" * 9, "b" * 10, "b"]
    spaced = "aaaa bbbb cc"  # a space at the last column: broken after it
    assert [spaced[a:b] for a, b in wrapped(spaced, 10)] == ["aaaa bbbb ", "cc"]


def test_a_fenced_block_with_a_language_is_a_block_until_its_fence_or_the_next_heading() -> None:
    lines = ["## Assistant", "```python", "x = 1", "y = 2", "```", "```", "plain", "```",
             "```sh", "ls", "## User", "hi"]  # fmt: skip
    blocks = code_blocks(lines)
    assert {n: b[2] for n, b in blocks.items()} == {2: "python", 3: "python", 9: "sh"}
    assert highlighted("no such", "no-such-language", True) is None
    (line,) = highlighted("def f(): pass", "python", True) or []
    assert line.plain == "def f(): pass" and line.spans  # coloured


class Shown(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield TranscriptView(id="transcript")

    def on_mount(self) -> None:
        self.query_one(TranscriptView).load_text(self.text)


def test_code_is_highlighted_and_a_diff_coloured_when_drawn() -> None:
    text = "\n".join(["## Assistant", "```python", "def f():", "    return 1", "```",
                      "  → Edit /a.py  [completed]", f"    {DIFF_MARK}-x = 1",
                      f"    {DIFF_MARK}+x = 2"])  # fmt: skip

    async def drive() -> list[list[str]]:
        app = Shown(text)
        async with app.run_test(size=(60, 12)) as pilot:
            await pilot.pause()
            view = app.query_one(TranscriptView)
            lines = [view.render_line(y) for y in range(8)]
        return [[str(s.style.color.name) for s in line if s.text.strip() and s.style and
                 s.style.color] for line in lines]  # fmt: skip

    colours = asyncio.run(drive())
    own = set(colours[0])  # a heading: bold, in the pane's own colour, as a call's line
    assert own == set(colours[5])
    assert set(colours[2]) - own  # `def f():` in the colours of a keyword and a name
    assert "green" in colours[7] and "red" in colours[6]


def test_a_long_transcript_opens_at_a_line_and_wraps_to_the_pane() -> None:
    text = "\n".join(f"line {n} " + "word " * 30 for n in range(3000))

    async def drive() -> tuple[int, int, str]:
        app = Shown(text)
        async with app.run_test(size=(60, 20)) as pilot:
            await pilot.pause()
            view = app.query_one(TranscriptView)
            view.load_text(text, at_line=1500)
            await pilot.pause()
            top = "".join(s.text for s in view.render_line(0))
            return view.virtual_size.height, int(view.scroll_y), top

    height, scrolled, top = asyncio.run(drive())
    assert height > 3000 * 2  # each line wrapped to the pane
    assert scrolled > 0 and top.startswith("line 1500 ")
