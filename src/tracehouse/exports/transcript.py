"""A session as a readable transcript: messages in order with attribution, tool calls with
their results (long ones cut), thinking folded, sources, and linked subagents."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracehouse.exports.diffs import edit_lines, edited_path
from tracehouse.model.timeline import children_by_call, message_notes, role_title, timeline
from tracehouse.resume.plan import hint
from tracehouse.timespec import local_time, parse_stored

CUT = 600
DIFF_LINES = 24  # of an edit's diff, unless `-v` asks for all of it
DIFF_MARK = "┆ "  # before each line of an edit's diff, as `│ ` before a result's
CONTEXT = 3  # messages shown on each side of the one a search hit opens


def render(
    detail: dict[str, Any], *, show_thinking: bool = False, cut: int = CUT, turns: bool = False
) -> str:
    """`turns` adds a table of the session's turns: tokens and how long each took."""
    return "\n".join(_lines(detail, show_thinking, cut, turns))


TURN_COLUMNS = ("turn", "started", "took", "model", "input", "output", "cache read",
                "cache write", "reasoning", "total")  # fmt: skip


def turn_lines(turns: list[dict[str, Any]]) -> Iterator[str]:
    """Per-turn tokens and durations as stored; `—` where a count or a time is unknown."""
    rows: list[tuple[str, ...]] = [TURN_COLUMNS]
    for t in turns:
        rows.append((
            str(t["seq"] if t["seq"] is not None else "?"),
            local_time(t.get("started_at")) or "—",
            _took(t.get("started_at"), t.get("completed_at")),
            t.get("model") or "—",
            *(_count(t.get(k)) for k in ("input_tokens", "output_tokens", "cached_input_tokens",
                                          "cache_write_tokens", "reasoning_tokens",
                                          "total_tokens")),
        ))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(TURN_COLUMNS))]
    yield f"## Turns ({len(turns)})"
    for r in rows:
        cells = [
            c.ljust(w) if i < 4 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        yield "  ".join(cells).rstrip()


def _count(value: Any) -> str:
    return "—" if value is None else f"{value:,}"


def _took(start: str | None, end: str | None) -> str:
    a, b = parse_stored(start), parse_stored(end)
    if a is None or b is None or b < a:
        return "—"
    seconds = (b - a).total_seconds()
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def _lines(detail: dict[str, Any], show_thinking: bool, cut: int, turns: bool) -> Iterator[str]:
    s = detail["session"]
    labels: dict[str, str] = detail.get("labels", {})
    yield f"# {s.get('title') or s.get('task_description') or s['label']}"
    yield ""
    yield from _header(s, labels)
    if turns:
        yield ""
        yield from turn_lines(detail["turns"])
    children = children_by_call(detail)
    before, after = detail.get("hidden", (0, 0))
    if before:
        yield ""
        yield f"… {before:,} earlier messages"
    for entry in timeline(detail):
        m = entry.message
        if m is None:
            yield from _call(entry.calls[0], children.get(entry.calls[0]["tool_call_id"]), cut)
            continue
        if entry.is_tool_result and m["message_id"] != detail.get("focus"):
            # Results are shown under their calls; only what they cited is left to show.
            for source in entry.sources:
                yield f"    ↳ source [{source['source_type']}] {source['uri']}"
            continue
        yield ""
        yield ("▶ " if m["message_id"] == detail.get("focus") else "") + _heading(m, labels)
        if m.get("thinking"):
            if show_thinking:
                yield from (f"> {line}" for line in m["thinking"].splitlines())
            else:
                yield f"▸ thinking folded ({len(m['thinking']):,} chars; --thinking shows it)"
        if m.get("content"):
            yield _cut(m["content"], cut if m["role"] != "user" else cut * 4)
        for call in entry.calls:
            yield from _call(call, children.get(call["tool_call_id"]), cut)
        for source in entry.sources:
            title = f" — {source['title']}" if source.get("title") else ""
            yield f"  ↳ source [{source['source_type']}] {source['uri']}{title}"
    if after:
        yield ""
        yield f"… {after:,} later messages"
    if detail["children"]:
        yield ""
        yield "## Subagents"
        for child in detail["children"]:
            task = child.get("task_description") or child.get("title") or ""
            yield (
                f"- {child['label']}: {task}"
                f" ({child['message_count']} messages, {child['total_tokens'] or 0:,} tokens,"
                f" spawned by {child.get('spawn_tool_call_id') or '?'})"
            )


def focus(detail: dict[str, Any], at: str, context: int = CONTEXT) -> dict[str, Any]:
    """The session cut to the messages around `at` (a message id, or a tool call id), for
    opening a transcript at a search hit. Raises LookupError if the session has no such row."""
    messages = detail["messages"]
    index = next((i for i, m in enumerate(messages) if m["message_id"] == at), None)
    if index is None:
        call = next((c for c in detail["tool_calls"] if c["tool_call_id"] == at), None)
        if call is None:
            raise LookupError(at)
        if call["message_id"] is not None:
            index = next(i for i, m in enumerate(messages) if m["message_id"] == call["message_id"])
        else:  # a call of no message (Codex): the last message before it
            started = call["started_at"] or ""
            index = max(
                (i for i, m in enumerate(messages) if (m["created_at"] or "") <= started),
                default=0,
            )
    lo, hi = max(0, index - context), min(len(messages), index + context + 1)
    kept = messages[lo:hi]
    ids = {m["message_id"] for m in kept}
    first, last = kept[0]["created_at"] or "", kept[-1]["created_at"] or ""
    return {
        **detail,
        "messages": kept,
        "tool_calls": [
            c
            for c in detail["tool_calls"]
            if c["message_id"] in ids
            or (c["message_id"] is None and first <= (c["started_at"] or "") <= last)
        ],
        "sources": [s for s in detail["sources"] if s["message_id"] in ids],
        "focus": messages[index]["message_id"],
        "hidden": (lo, len(messages) - hi),
    }


def since(detail: dict[str, Any], moment: str) -> dict[str, Any]:
    """The session's messages from `moment` on (a UTC ISO time, as the ledger stores them), with
    their calls and sources, the earlier ones counted as hidden: what came in since an agent or
    a person last read it. A message of no time is taken as earlier."""
    messages = detail["messages"]
    kept = [m for m in messages if (m["created_at"] or "") >= moment]
    ids = {m["message_id"] for m in kept}
    before, after = detail.get("hidden", (0, 0))
    return {
        **detail,
        "messages": kept,
        "tool_calls": [
            c
            for c in detail["tool_calls"]
            if c["message_id"] in ids
            or (c["message_id"] is None and (c["started_at"] or "") >= moment)
        ],
        "sources": [s for s in detail["sources"] if s["message_id"] in ids],
        "hidden": (before + len(messages) - len(kept), after),
    }


def _header(s: dict[str, Any], labels: dict[str, str]) -> Iterator[str]:
    fields = [
        ("session", f"{s['label']}  ({s['session_id']})"),
        ("source", f"{s['source_provider']} {s['source_session_id']}"),
        ("workspace", s.get("workspace_path")),
        ("git branch", s.get("git_branch")),
        ("model", s.get("model")),
        ("tool", " ".join(x for x in (s.get("tool_version"), s.get("entrypoint")) if x) or None),
        ("time", f"{s.get('created_at') or '?'} → {s.get('updated_at') or '?'}"),
        ("parent", labels.get(s.get("parent_session_id") or "", s.get("parent_session_id"))),
        (
            "counts",
            f"{s['turn_count']} turns, {s['message_count']} messages,"
            f" {s['tool_call_count']} tool calls",
        ),
        (
            "tokens",
            f"not recorded by {s['source_provider']}"
            if s["total_tokens"] is None
            else f"{s['total_tokens']:,} total: {s['input_tokens'] or 0:,} in,"
            f" {s['output_tokens'] or 0:,} out, {s['cached_input_tokens'] or 0:,} cache read,"
            f" {s['cache_write_tokens'] or 0:,} cache write",
        ),
        ("file", s.get("source_path")),
        ("resume", hint(s)),
        ("missing", s.get("source_missing_at") and f"source gone since {s['source_missing_at']}"),
    ]
    for name, value in fields:
        if value:
            yield f"{name:<11}{value}"


def _heading(m: dict[str, Any], labels: dict[str, str]) -> str:
    notes = message_notes(m, labels)
    shown = f" ({' '.join(notes)})" if notes else ""
    model = f" · {m['model']}" if m.get("model") else ""
    return f"## {role_title(m)}{shown} [{m.get('created_at') or '?'}]{model}"


def _call(call: dict[str, Any], child: dict[str, Any] | None, cut: int) -> Iterator[str]:
    brief = cut <= CUT  # `-v` asks for long text uncut: parameters and every line of a result
    diff = edit_lines(call.get("params"))
    if diff is not None:  # an edit: the file it changed, and the change as a diff
        yield f"  → {call['tool_name']} {edited_path(call.get('params')) or ''}  [{call['status']}]"
        shown = diff[:DIFF_LINES] if brief else diff
        yield from (f"    {DIFF_MARK}{line}" for line in shown)
        if len(diff) > len(shown):
            yield f"    {DIFF_MARK}… {len(diff) - len(shown):,} more lines of the diff"
    else:
        params = _cut(call.get("params") or "", 200 if brief else cut).replace("\n", " ")
        yield f"  → {call['tool_name']} {params}  [{call['status']}]"
    if call.get("error"):
        yield f"    ✗ {_cut(call['error'], cut // 2)}"
    elif call.get("result"):
        lines = _cut(call["result"], cut // 2).splitlines()
        for line in lines[:12] if brief else lines:
            yield f"    │ {line}"
    if child is not None:
        yield f"    ⇢ subagent {child['label']} ({child['message_count']} messages)"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit:,} more chars]"
