"""`tracehouse usage`'s table, drawn without rich (issue #68: the quick path loads nothing heavier
than the report): every column piped, a terminal's width fitted by leaving out the columns a
ccusage user reads least, styles only on a terminal, what the ledger named escaped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tracehouse.cli.usage_text import NARROWING, cell_width, usage_text
from tracehouse.model.tokens import Tokens
from tracehouse.reports.usage_report import Line, Report


def _report(keys: list[str], models: list[str] | None = None, unpriced: int = 0) -> Report:
    lines, total = [], Line("total", "all")
    for n, key in enumerate(keys):
        line = Line(key, "claude-code")
        tokens = Tokens(input=10**n * 1234, output=99 * n, cache_read=10**n * 1000, reasoning=n)
        line.add("claude-opus-4-1", tokens, 1.5 * n if not unpriced else None)
        total.add("claude-opus-4-1", tokens, 1.5 * n if not unpriced else None)
        lines.append(line)
        for model in models or []:
            part = Line(key, "claude-code", model)
            part.add(model, tokens, 0.5)
            lines.append(part)
    unpriced_models = {"mystery-model": total.unpriced} if unpriced else {}
    return Report("daily", lines, total, "genai-prices 0.2.3", False, unpriced_models)


def test_piped_every_column_and_line_is_whole() -> None:
    text = usage_text(_report(["2026-12-01", "2026-12-02"], unpriced=1))
    lines = text.splitlines()
    assert lines[0].startswith("input: no cache served")
    assert lines[1].split() == ["date", "provider", "input", "cache", "write", "cache", "read",
                                "output", "reasoning", "total", "cost"]  # fmt: skip
    assert lines[-1].startswith("not in the cost: ") and "mystery-model" in lines[-1]
    assert "\x1b" not in text and all(line == line.rstrip() for line in lines)
    table = lines[1:5]  # the columns line up: each right-aligned figure ends where its head does
    assert len({len(line) for line in table}) == 1


def test_a_narrow_terminal_leaves_out_the_columns_read_least_and_says_so() -> None:
    report = _report(["2026-12-01", "2026-12-02"], unpriced=1)
    wide = usage_text(report).splitlines()
    text = usage_text(report, width=70).splitlines()
    header = next(line for line in text if line.startswith("date")).split()
    assert "reasoning" not in header and "write" not in header and "cost" in header
    assert all(cell_width(line) <= 70 for line in text)
    assert "\nnot shown at this width: reasoning, cache write (a pipe" in "\n".join(text)
    assert len(text) > len(wide)  # the notes wrap


def test_a_terminal_gets_styles_and_the_ledgers_text_is_escaped() -> None:
    report = _report(["2026-12-01"], models=["evil\x1b]0;pwned\x07model"])
    text = usage_text(report, width=200, styled=True).splitlines()
    assert text[0].startswith("\x1b[2minput:") and text[1].startswith("\x1b[1mdate")
    assert text[3].startswith("\x1b[2m  └ evil\\x1b]0;pwned\\x07model")  # the breakdown, dim
    assert text[4].startswith("\x1b[1mtotal")
    assert "\x07" not in "".join(text) and "\x1b]" not in "".join(text)


def test_a_line_break_in_a_name_stays_in_its_cell() -> None:
    report = _report(["two\nlines", "tab\there"])
    report.period = "project"
    table = usage_text(report).splitlines()[1:5]
    assert table[1].startswith(r"two\x0alines ") and table[2].startswith(r"tab\x09here ")
    assert len({cell_width(line) for line in table}) == 1


def test_wide_characters_take_two_columns() -> None:
    report = _report(["日本語のプロジェクト", "ascii-project"])
    report.period = "project"
    table = usage_text(report).splitlines()[1:5]
    assert len({cell_width(line) for line in table}) == 1


@given(
    keys=st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=4),
    width=st.integers(min_value=1, max_value=200),
    unpriced=st.integers(min_value=0, max_value=1),
)
def test_at_any_width_the_table_fits_or_has_nothing_left_to_leave_out(
    keys: list[str], width: int, unpriced: int
) -> None:
    report = _report(keys, unpriced=unpriced)
    text = usage_text(report, width=width).splitlines()
    rows = len(report.lines) + 2
    header_at = next(i for i, line in enumerate(text) if line.startswith("date"))
    table_lines = text[header_at : header_at + rows]
    fits = all(cell_width(line) <= width for line in table_lines)
    dropped = [name for name in NARROWING if name not in table_lines[0]]
    assert fits or len(dropped) == len(NARROWING)
    for note in text[:header_at] + text[header_at + rows :]:  # a note wraps at spaces
        assert cell_width(note) <= width or " " not in note
