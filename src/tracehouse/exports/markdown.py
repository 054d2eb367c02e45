"""A session as a Markdown log: one heading per message with its attribution
(`## User (from cc-29ccd257 via Task) [time]`), tool calls with their parameters and results,
thinking folded in `<details>`, cited sources, and subagents as links to their own files.

Nothing a session holds may break the document's structure: text that holds a Markdown heading,
a fence, a rule or raw HTML is fenced, with a fence longer than any run of backticks inside it.
Everything is kept whole; an export is an archive, not a preview.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from tracehouse.exports.header import header_fields
from tracehouse.model.timeline import (
    Entry,
    children_by_call,
    message_notes,
    pretty_params,
    role_title,
    session_title,
    timeline,
    unplaced_children,
)
from tracehouse.shown import escaped, unstyled

Row = dict[str, Any]
# A line that would start a block of its own: a heading, a setext underline or rule, a fence,
# raw HTML (which could close our `<details>`), a table row, or a block quote.
_STRUCTURAL = re.compile(r"^ {0,3}(#{1,6}(\s|$)|[=\-*_]{3,}\s*$|`{3,}|~{3,}|<|\||>)", re.M)
_BACKTICKS = re.compile(r"`+")


def render(
    detail: dict[str, Any],
    *,
    link: Callable[[str], str | None],
    when: Callable[[str | None], str],
    context_only: bool = False,
) -> str:
    """`link(session_id)` is the file a session was exported to (None: not exported), `when`
    formats a stored time for the reader (local time or UTC). Control characters are escaped
    and terminal styling dropped (`shown.escaped`): a Markdown file is read in terminals and
    viewers alike."""
    return escaped("\n".join(_document(detail, link, when, context_only)) + "\n")


def _document(
    detail: dict[str, Any],
    link: Callable[[str], str | None],
    when: Callable[[str | None], str],
    context_only: bool,
) -> Iterator[str]:
    s = detail["session"]
    labels: dict[str, str] = detail.get("labels", {})
    yield f"# {_inline(session_title(s))}"
    yield ""
    yield from _header(s, labels, link, when)
    children = children_by_call(detail)
    for entry in timeline(detail, context_only=context_only):
        yield from _entry(entry, labels, children, link, when)
    unplaced = unplaced_children(detail)
    if unplaced:
        yield ""
        yield "## Subagents"
        yield ""
        yield from (f"- {_child(c, link)}" for c in unplaced)


def _header(
    s: Row, labels: dict[str, str], link: Callable[[str], str | None],
    when: Callable[[str | None], str],
) -> Iterator[str]:  # fmt: skip
    for name, value, linked in header_fields(s, labels, when):
        shown = _session_link(linked, value, link) if linked else _inline(value)
        yield f"- **{name}:** {shown}"


def _entry(
    entry: Entry,
    labels: dict[str, str],
    children: dict[str, Row],
    link: Callable[[str], str | None],
    when: Callable[[str | None], str],
) -> Iterator[str]:
    m = entry.message
    if m is not None and not entry.is_tool_result:
        notes = message_notes(m, labels)
        shown = f" ({_inline(' '.join(notes))})" if notes else ""
        model = f" · {_inline(m['model'])}" if m.get("model") else ""
        yield ""
        yield f"## {role_title(m)}{shown} [{when(m.get('created_at'))}]{model}"
        if m.get("thinking"):
            yield ""
            yield from _folded(f"Thinking ({len(m['thinking']):,} chars)", m["thinking"], "text")
        if m.get("content"):
            yield ""
            yield _block(m["content"])
    for call in entry.calls:
        yield from _call(call, children.get(call["tool_call_id"]), link)
    if entry.sources:
        yield ""
        yield "**Sources**"
        yield ""
        for source in entry.sources:
            title = _inline(source.get("title") or source.get("uri") or source["source_id"])
            uri = source.get("uri")
            target = f"[{title}](<{uri}>)" if uri and "://" in uri else title
            yield f"- {target} ({source['source_type']})"


def _call(call: Row, child: Row | None, link: Callable[[str], str | None]) -> Iterator[str]:
    yield ""
    status = f" — {call['status']}" if call.get("status") else ""
    yield f"**→ {_inline(call['tool_name'])}**{status}"
    params = pretty_params(call.get("params"))
    if params:
        yield ""
        yield _fenced(params, "json")
    if call.get("error"):
        yield ""
        yield from _folded("Error", call["error"], "text", open_=True)
    elif call.get("result"):
        lines = call["result"].count("\n") + 1
        yield ""
        yield from _folded(f"Result ({lines:,} lines)", call["result"], "text")
    if child is not None:
        yield ""
        yield f"Subagent: {_child(child, link)}"


def _child(child: Row, link: Callable[[str], str | None]) -> str:
    task = child.get("task_description") or child.get("title") or ""
    what = f" — {_inline(task)}" if task else ""
    return (f"{_session_link(child['session_id'], child['label'], link)}{what}"
            f" ({child['message_count']} messages)")  # fmt: skip


def _session_link(session_id: str, label: str, link: Callable[[str], str | None]) -> str:
    target = link(session_id)
    return f"[{label}]({target})" if target else f"`{label}`"


def _folded(summary: str, text: str, lang: str, *, open_: bool = False) -> Iterator[str]:
    yield "<details open>" if open_ else "<details>"
    yield f"<summary>{_html_escape(summary)}</summary>"
    yield ""
    yield _fenced(text, lang)
    yield ""
    yield "</details>"


def _block(text: str) -> str:
    """Message text as Markdown where that is safe, fenced where it would break the log."""
    text = text.strip("\n")
    return _fenced(text, "text") if _STRUCTURAL.search(text) else text


def _fenced(text: str, lang: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


def _inline(text: str) -> str:
    """Text for a heading or list line: one line, with nothing that could open markup."""
    one_line = " ".join(unstyled(text).split())
    return one_line.replace("<", "&lt;").replace("[", "\\[").replace("]", "\\]")


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
