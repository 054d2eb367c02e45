"""Usage charts drawn on the server as SVG: no script, no chart library, nothing fetched, so the
usage page reads without JavaScript and prints. Each chart is a picture with its figures in its
`<title>`s for a screen reader or a pointer; the page shows the same figures as a table.

A chart is made of a report's rows (`reports.usage.Line`): bars of tokens per day, or bars of
tokens per model, project or machine with their cost beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from tracehouse.reports.usage import Line

WIDTH = 720
BAR = 18  # a horizontal bar's height
LABEL = 220  # room for a horizontal bar's label


@dataclass(frozen=True)
class Bar:
    label: str
    tokens: int
    cost: float | None

    @property
    def said(self) -> str:
        cost = "no price" if self.cost is None else f"${self.cost:,.2f}"
        return f"{self.label}: {self.tokens:,} tokens, {cost}"


def bars(lines: Sequence[Line], most: int = 12) -> list[Bar]:
    """One bar per key (a report's providers of one key added up), largest first."""
    merged: dict[str, Bar] = {}
    for line in lines:
        if line.model is not None:
            continue
        was = merged.get(line.key, Bar(line.key, 0, None))
        costs = [c for c in (was.cost, line.known_cost) if c is not None]
        merged[line.key] = Bar(line.key, was.tokens + line.tokens.total,
                               sum(costs) if costs else None)  # fmt: skip
    return sorted(merged.values(), key=lambda b: (-b.tokens, b.label))[:most]


def days(lines: Sequence[Line]) -> list[Bar]:
    """One bar per day, in order (a report's providers of one day added up)."""
    return sorted(bars(lines, most=10_000), key=lambda b: b.label)


def columns(series: Sequence[Bar], title: str, height: int = 180, cost: bool = False) -> Markup:
    """Vertical bars of tokens (or of `cost`), one per day with usage."""
    if not series:
        return Markup("")

    def value(bar: Bar) -> float:
        return (bar.cost or 0.0) if cost else bar.tokens

    top = max(value(b) for b in series) or 1
    step = WIDTH / len(series)
    width = max(step - 2, 1)
    parts = []
    for i, bar in enumerate(series):
        h = value(bar) / top * (height - 20)
        parts.append(
            f'<rect class="bar" x="{i * step:.1f}" y="{height - h:.1f}" width="{width:.1f}"'
            f' height="{h:.1f}"><title>{escape(bar.said)}</title></rect>'
        )
    first, last = escape(series[0].label), escape(series[-1].label)
    below = height + 14
    scale = f"${top:,.2f}" if cost else f"{_short(int(top))} tokens"
    axis = (
        f'<text x="0" y="12" class="axis">{scale}</text>'
        f'<text x="0" y="{below}" class="axis">{first}</text>'
        f'<text x="{WIDTH}" y="{below}" class="axis" text-anchor="end">{last}</text>'
    )
    return _svg(title, height + 20, "".join(parts) + axis)


def rows(series: Sequence[Bar], title: str) -> Markup:
    """Horizontal bars of tokens, one per model, project or machine, with the cost."""
    if not series:
        return Markup("")
    top = max(b.tokens for b in series) or 1
    room = WIDTH - LABEL - 150
    parts = []
    for i, bar in enumerate(series):
        y = i * (BAR + 8)
        w = max(bar.tokens / top * room, 1)
        cost = "—" if bar.cost is None else f"${bar.cost:,.2f}"
        parts.append(
            f"<g><title>{escape(bar.said)}</title>"
            f'<text x="{LABEL - 8}" y="{y + 13}" text-anchor="end" class="label">'
            f"{escape(_clip(bar.label))}</text>"
            f'<rect class="bar" x="{LABEL}" y="{y}" width="{w:.1f}" height="{BAR}"></rect>'
            f'<text x="{LABEL + w + 6:.1f}" y="{y + 13}" class="value">{_short(bar.tokens)}'
            f" · {escape(cost)}</text></g>"
        )
    return _svg(title, len(series) * (BAR + 8), "".join(parts))


def _svg(title: str, height: int, body: str) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img"'
        f' aria-label="{escape(title)}" preserveAspectRatio="xMinYMin meet">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )


def _short(n: int) -> str:
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _clip(label: str, most: int = 30) -> str:
    return label if len(label) <= most else "…" + label[-(most - 1) :]
