"""What a transcript says, as HTML a person reads: Markdown rendered, code highlighted, file edits
as diffs, long results folded with their size. Shared by `export --format html` and the
gateway's pages.

Markdown goes through markdown-it-py (CommonMark with tables and strikethrough) with raw HTML
off — `<script>` in a message is shown as text, never passed through — and links limited to
safe schemes by its own validation; the HTML it makes is then cleaned by nh3 (ammonia) to the
tags Markdown produces, so nothing a transcript holds can add a script, a handler or a remote
image. Pygments highlights fenced code with a language. Both were measured on the fixture
transcripts (`bench/render_bench.py`). A renderer keeps what it rendered by text, so a page shown
again costs little.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from markupsafe import Markup, escape

from tracehouse.exports.diffs import edit_lines, line_kind
from tracehouse.shown import escaped

# What Markdown makes, and no more. Images are left out: a remote image is a request a page makes
# when read, and an export must open offline.
TAGS = {"p", "br", "hr", "em", "strong", "s", "del", "code", "pre", "blockquote", "ul", "ol",
        "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
        "a", "span", "div"}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "span": {"class"}, "code": {"class"}, "pre": {"class"},
              "div": {"class"}, "ol": {"start"}}  # fmt: skip
SCHEMES = {"http", "https", "mailto"}
HIGHLIGHT_MOST = 100_000  # longer code is shown plain: Pygments takes ~1 s a megabyte
FOLD_LINES, FOLD_CHARS = 12, 1_500  # a result longer than this is folded, its size shown


class Renderer:
    def __init__(self, cache: int = 8192) -> None:
        from markdown_it import MarkdownIt

        self._md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
        self._md.enable(["table", "strikethrough"])
        self.markdown = lru_cache(maxsize=cache)(self._markdown)

    def _markdown(self, text: str) -> Markup:
        import nh3

        html = self._md.render(text)
        clean = nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes=SCHEMES,
                          link_rel="noopener noreferrer nofollow")  # fmt: skip
        return Markup(clean)


def _highlight(code: str, language: str, _attrs: Any) -> str:
    """A fenced block's HTML (`<pre><code>` is added by markdown-it): highlighted when its
    language is known to Pygments and it is not too long, else escaped as it is."""
    if not language or len(code) > HIGHLIGHT_MOST:
        return ""  # markdown-it escapes it
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language.split()[0], stripnl=False)
    except ClassNotFound:
        return ""
    return str(highlight(code, lexer, HtmlFormatter(nowrap=True, classprefix="hl-")))


def edit_diff(params: Any) -> Markup | None:
    """A file edit's change as a coloured unified diff; None for a call that is not an edit."""
    lines = edit_lines(params)
    if lines is None:
        return None
    # Each line is a block (its colour spans the width), so no newline goes between them.
    shown = "".join(f'<span class="d-{line_kind(line)}">{escape(line)}</span>' for line in lines)
    return Markup('<pre class="diff">' + shown + "</pre>")


def folded(text: str) -> str | None:
    """The size to show on a long result's fold (`12 KB · 340 lines`), or None to show it open."""
    lines = text.count("\n") + 1
    if lines <= FOLD_LINES and len(text) <= FOLD_CHARS:
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    shown = f"{size / 1024:,.1f} KB" if size >= 1024 else f"{size} bytes"
    return f"{shown} · {lines:,} lines"


@lru_cache(maxsize=1)
def code_css() -> Markup:
    """Pygments' colours for highlighted code, light and dark as the reader's system is."""
    from pygments.formatters import HtmlFormatter

    def tokens(style: str) -> str:  # the token colours only: the page's own styles set the rest
        formatter: Any = HtmlFormatter(style=style, classprefix="hl-")
        rules = str(formatter.get_style_defs(".md pre"))
        return "\n".join(line for line in rules.splitlines() if " .hl-" in line)

    dark = tokens("monokai")
    return Markup(f"{tokens('default')}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}")


def shown_text(value: Any) -> Any:
    """What a template prints (its `finalize`): text with its control characters and
    bidirectional overrides escaped, whatever field of the ledger it came from; markup stays
    markup (those characters are no part of HTML's syntax)."""
    if isinstance(value, Markup):
        return Markup(escaped(str(value)))
    if isinstance(value, str):
        return escaped(value)
    return value
