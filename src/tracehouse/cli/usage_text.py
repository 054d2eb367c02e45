"""`tracehouse usage`'s report as text: a table in the columns ccusage users read, the ledger's
convention said once above it, where the prices come from and what they leave out below.

Drawn here rather than by rich, so that the quick path (`cli/entry.py`) prints it having loaded
nothing but the report, the same bytes as the full command. On a terminal the header and the
total are bold, the breakdown rows and the notes dim, and the table fits the width: the columns
a ccusage user reads least give way first (`NARROWING`), said in a note, and the notes wrap at
spaces; piped, every column and line is whole. Whatever the ledger named is shown escaped
(`shown.escaped_line`: a line break in a project's name stays in its cell).
"""

from __future__ import annotations

import os
import sys
import unicodedata

from tracehouse.shown import escaped_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from tracehouse.reports.usage_report import Line, Report

# As ccusage users read them: the input no cache served, the cache apart, output with its
# reasoning, and the total of all four, which is the ledger's input + output.
COLUMNS = ("input", "cache write", "cache read", "output", "reasoning", "total", "cost")
CONVENTION = "input: no cache served · output: reasoning included · total: all of them"
# The columns left out, in this order, where a terminal is narrower than the table.
NARROWING = ("reasoning", "cache write", "total", "cache read")
GAP = "  "
BOLD, DIM, RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def terminal(stream: TextIO) -> tuple[int | None, bool]:
    """The width to fit and whether to style: a terminal's (its `COLUMNS` where set, as a
    terminal's programs read it), else None and no styles."""
    if not stream.isatty():
        return None, False
    styled = os.environ.get("TERM") != "dumb"
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return int(given), styled
    try:
        return os.get_terminal_size(stream.fileno()).columns, styled
    except (OSError, ValueError):
        return 80, styled


def usage_text(report: Report, *, width: int | None = None, styled: bool = False) -> str:
    """The report as printed, every line ended; `width` None: piped, nothing fitted."""

    def style(text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if styled and text else text

    heading = {"daily": "date", "weekly": "week", "monthly": "month"}.get(
        report.period, report.period
    )
    header = [heading, "provider", *COLUMNS]
    rows: list[tuple[list[str], str]] = []
    for line in report.lines:
        if line.model is not None:
            rows.append(([f"  └ {escaped_line(line.model)}", "", *cells(line)], DIM))
        else:
            rows.append(([escaped_line(line.key), escaped_line(line.provider), *cells(line)], ""))
    footer = ["total", "", *cells(report.total)]
    table = [header, *(cells_ for cells_, _ in rows), footer]
    shown, left_out = _fitted(table, width)
    widths = [max(cell_width(r[i]) for r in table) for i in shown]

    def joined(cells_: list[str]) -> str:
        padded = []
        for n, i in enumerate(shown):
            gap = " " * (widths[n] - cell_width(cells_[i]))
            padded.append(cells_[i] + gap if i < 2 else gap + cells_[i])
        return GAP.join(padded).rstrip()

    notes = [f"cost at API list prices ({escaped_line(report.prices)}), each turn at its date"]
    if report.unpriced:
        models = ", ".join(f"{escaped_line(m)} {n:,}" for m, n in report.unpriced.items())
        notes.append(
            f"not in the cost: {report.total.unpriced:,} tokens of models without a price"
            f" ({models}); — : none priced, * : some. Price them in a prices.toml."
        )
    if left_out:
        notes.append(f"not shown at this width: {', '.join(left_out)} (a pipe shows every column)")
    out = [style(part, DIM) for part in _wrapped(CONVENTION, width)]
    out.append(style(joined(header), BOLD))
    out += [style(joined(cells_), code) for cells_, code in rows]
    out.append(style(joined(footer), BOLD))
    out += [style(part, DIM) for note in notes for part in _wrapped(note, width)]
    return "".join(f"{line}\n" for line in out)


def cells(line: Line) -> list[str]:
    """A line's figures as the table shows them: counts with thousands separators, the cost in
    dollars (`*`: some tokens had no price, `—`: none had)."""
    t = line.tokens
    cost = line.known_cost
    shown = "—" if cost is None else f"${cost:,.2f}" + ("*" if line.unpriced else "")
    counts = (t.fresh, t.cache_write, t.cache_read, t.output, t.reasoning, t.total)
    return [f"{n:,}" for n in counts] + [shown]


def cell_width(text: str) -> int:
    """The columns `text` takes on a terminal: East Asian wide characters take two, combining
    marks none."""
    if text.isascii():
        return len(text)
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _fitted(table: list[list[str]], width: int | None) -> tuple[list[int], list[str]]:
    """The columns shown (by index) and the names of those left out to fit `width`."""
    shown = list(range(len(table[0])))
    left_out: list[str] = []

    def wide() -> int:
        return sum(max(cell_width(r[i]) for r in table) for i in shown) + len(GAP) * (
            len(shown) - 1
        )

    for name in NARROWING:
        if width is None or wide() <= width:
            break
        shown.remove(table[0].index(name))
        left_out.append(name)
    return shown, left_out


def _wrapped(text: str, width: int | None) -> list[str]:
    """`text` in lines of at most `width` columns, broken at spaces (a word longer than the
    width keeps its own line)."""
    if width is None or cell_width(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        if line and cell_width(line) + 1 + cell_width(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]


def write(report: Report) -> None:
    """Print the report on standard output, fitted and styled if that is a terminal."""
    width, styled = terminal(sys.stdout)
    sys.stdout.write(usage_text(report, width=width, styled=styled))
