"""`read_session`: a session, or a window of it, as text a model reads within a token budget.

A model's context window is the scarce thing: a 5,000-message session must come back a page at
a time, each page saying how to get the next. The page is cut by entries of the session's
timeline (a message with the calls it made, or a call of no message), so a call is never
separated from its result; an entry larger than the whole budget is cut inside.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tracehouse.errors import ConfigError
from tracehouse.exports.transcript import since as messages_since
from tracehouse.model.threads import active_view
from tracehouse.model.timeline import (
    Entry,
    children_by_call,
    message_notes,
    role_title,
    session_title,
    timeline,
)
from tracehouse.resume.plan import hint
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import SessionNotFound, find_session, session_detail
from tracehouse.timespec import to_utc_iso

DEFAULT_BUDGET = 8000  # tokens
BUDGET_RANGE = (500, 100_000)
DEFAULT_RESULT_CHARS = 1500
RESULT_RANGE = (0, 400_000)
CONTEXT = 2  # entries shown before the one `around` names
_BACKTICKS = re.compile("`+")


def estimate_tokens(text: str) -> int:
    """An upper estimate of the tokens a model's tokenizer makes of `text`: English and code
    run at about four characters a token, and a character outside ASCII (CJK, emoji, accents)
    is counted as a token of its own, never less."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return -(-ascii_chars // 4) + (len(text) - ascii_chars)


def fit(text: str, tokens: int) -> str:
    """The longest beginning of `text` whose estimate is within `tokens`."""
    if estimate_tokens(text) <= tokens:
        return text
    lo, hi = 0, min(len(text), tokens * 4)
    while lo < hi:  # binary search: the estimate grows with the length
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


@dataclass(frozen=True)
class Page:
    text: str
    first: int  # the first entry shown
    next: int | None  # the entry the next page starts at; None: the session's end
    entries: int  # in the whole session


def read_session(
    store: SessionStore,
    session: str,
    *,
    around: str | None = None,
    start: int | None = None,
    budget: int = DEFAULT_BUDGET,
    result_chars: int = DEFAULT_RESULT_CHARS,
    since: str | None = None,
) -> Page:
    """One page of `session` (a label, id or source id): from entry `start`, or a little before
    the message or tool call `around` names (a search hit's handle); with `since` (a UTC time
    or a duration back), only what came in from then on, its entries numbered from 0."""
    _within(budget, "budget", BUDGET_RANGE)
    _within(result_chars, "result_chars", RESULT_RANGE)
    if start is not None and start < 0:
        raise ConfigError(f"start {start}: an entry number, 0 or more")
    if start is not None and around is not None:
        raise ConfigError("give start or around, not both")
    if since is not None and around is not None:
        raise ConfigError("give since or around, not both")
    moment = to_utc_iso(since, option="since", utc=True) if since is not None else None
    found = find_session(store, session)
    detail = active_view(session_detail(store, found["session_id"]), "")
    if moment is not None:
        detail = messages_since(detail, moment)
    entries = list(timeline(detail))
    focus = None
    if around is not None:
        focus = _entry_of(entries, around)
        if focus is None:
            raise SessionNotFound(f"around {around!r}: no such message or tool call in {session}")
        start = max(0, focus - CONTEXT)
    first = start or 0
    if first >= len(entries) and entries:
        raise ConfigError(f"start {first}: {found['label']} has {len(entries)} entries (0–"
                          f"{len(entries) - 1})")  # fmt: skip
    head = "\n".join(_header(detail, len(entries), first, moment)) + "\n"
    left = budget - estimate_tokens(head) - 60  # the footer's room
    children = children_by_call(detail)
    parts: list[str] = []
    shown = first
    for i in range(first, len(entries)):
        text = "\n".join(_entry(entries[i], i, i == focus, children, detail, result_chars))
        if not text.strip():  # a tool result, shown under its call
            shown = i + 1
            continue
        cost = estimate_tokens(text) + 1
        if cost > left:
            if i == first:  # an entry larger than the page: its beginning, and how to see all
                whole = min(budget - left + cost + 100, BUDGET_RANGE[1])
                note = f"\n… [entry cut to the budget: budget={whole} shows it whole]"
                parts.append(fit(text, max(left - estimate_tokens(note), 0)) + note)
                shown = i + 1
            break
        parts.append(text)
        left -= cost
        shown = i + 1
    after = shown if shown < len(entries) else None
    foot = (
        f"\n— entries {first}–{shown - 1} of {len(entries)}; next page:"
        f' read_session(session="{found["label"]}"{_since_arg(moment)}, start={after})'
        if after is not None
        else f"\n— entries {first}–{max(shown - 1, first)} of {len(entries)}: the end"
    )
    return Page(head + "\n".join(parts) + foot, first, after, len(entries))


def _within(value: int, name: str, bounds: tuple[int, int]) -> None:
    lo, hi = bounds
    if not lo <= value <= hi:
        raise ConfigError(f"{name} {value}: from {lo:,} to {hi:,}")


def _entry_of(entries: list[Entry], ref: str) -> int | None:
    for i, entry in enumerate(entries):
        if entry.message is not None and entry.message["message_id"] == ref:
            return i
        if any(c["tool_call_id"] == ref for c in entry.calls):
            return i
    return None


def _since_arg(moment: str | None) -> str:
    return f', since="{moment}"' if moment else ""


def _header(
    detail: dict[str, Any], entries: int, first: int, moment: str | None = None
) -> Iterator[str]:
    s = detail["session"]
    yield f"# {session_title(s)}"
    facts = [s["label"], s["source_provider"], s.get("workspace_path") or s.get("project"),
             s.get("model"), _span(s)]  # fmt: skip
    yield " · ".join(str(f) for f in facts if f)
    tokens = "tokens not recorded" if s["total_tokens"] is None else f"{s['total_tokens']:,} tokens"
    yield (f"{s['message_count']} messages, {s['tool_call_count']} tool calls, {tokens};"
           f" {entries} entries")  # fmt: skip
    yield f"resume: {hint(s)}"
    parent = s.get("parent_session_id")
    if parent:
        task = s.get("task_description") or ""
        yield f"subagent of {detail['labels'].get(parent, parent)}: {task}"
    if moment:
        earlier = detail["hidden"][0]
        yield f"(messages since {moment}; {earlier:,} earlier not shown)"
    if first:
        yield f"(from entry {first}; earlier ones: start={max(0, first - 20)})"


def _span(s: dict[str, Any]) -> str | None:
    start, end = s.get("created_at"), s.get("updated_at")
    if not start:
        return None
    return f"{start[:16].replace('T', ' ')} → {end[:16].replace('T', ' ')}" if end else start


def _entry(
    entry: Entry,
    index: int,
    focused: bool,
    children: dict[str, Any],
    detail: dict[str, Any],
    result_chars: int,
) -> Iterator[str]:
    m = entry.message
    mark = "▶ " if focused else ""
    if m is not None and not (entry.is_tool_result and not focused):
        notes = message_notes(m, detail["labels"])
        bits = [role_title(m), *notes, m.get("model"), _clock(m.get("created_at"))]
        yield f"\n### {mark}[{index}] " + " · ".join(str(b) for b in bits if b)
        yield f"id {m['message_id']}"
        if m.get("thinking"):
            yield f"(thinking: {len(m['thinking']):,} chars, not shown)"
        if m.get("content"):
            yield m["content"]
    elif m is None:
        yield f"\n### {mark}[{index}] tool call · {_clock(entry.calls[0].get('started_at'))}"
    for call in entry.calls:
        yield from _call(call, children.get(call["tool_call_id"]), result_chars)
    for source in entry.sources:
        yield f"- source [{source['source_type']}] {source['uri']}"


def _call(call: dict[str, Any], child: dict[str, Any] | None, result_chars: int) -> Iterator[str]:
    params = call.get("params") or "{}"
    status = call.get("status") or "?"
    yield f"- **{call['tool_name']}** {params} → {status} (call {call['tool_call_id']})"
    body = call.get("error") or call.get("result") or ""
    if body:
        what = "error" if call.get("error") else "result"
        cut = body[:result_chars]
        more = len(body) - len(cut)
        tail = f"\n  … [{more:,} more chars: result_chars={len(body)} shows it]" if more else ""
        if cut:
            fence = _fence(cut)
            yield f"  {what}:\n  {fence}\n" + _indented(cut) + f"\n  {fence}" + tail
        else:
            yield f"  {what}: {len(body):,} chars (result_chars=0)"
    if child is not None:
        yield (f'  subagent {child["label"]} ({child["message_count"]} messages):'
               f' read_session(session="{child["label"]}")')  # fmt: skip


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in `text`, so none closes it early."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def _indented(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def _clock(at: str | None) -> str | None:
    return at[:19].replace("T", " ") if at else None
