"""The MCP tools as plain functions: a store and the tool's arguments in, compact Markdown out.

Each is a thin call of the library the CLI uses (search, the session filters, the usage report),
validated the same way; what they print carries the ids the next call needs (a label to read,
a message id to open a session around). Times are UTC, as a model reasons best about one zone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tracehouse.errors import ConfigError
from tracehouse.mcp_server.files import Touch, files_touched
from tracehouse.mcp_server.reading import read_session
from tracehouse.model.timeline import session_title
from tracehouse.reports.filters import (
    SessionFilters,
    build_search_filters,
    build_session_filters,
    count_sessions,
)
from tracehouse.reports.filters import list_sessions as listed
from tracehouse.reports.pricing import Prices
from tracehouse.reports.usage import Line, usage
from tracehouse.search.hits import MARK, Hit
from tracehouse.store.protocol import SessionStore

if TYPE_CHECKING:
    from tracehouse.search.embedders import Lazy

MAX_HITS = 50
MAX_PAGE = 100


def search(
    store: SessionStore,
    query: str,
    *,
    providers: Sequence[str] = (),
    project: str | None = None,
    session: str | None = None,
    types: Sequence[str] = (),
    tool: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 10,
    mode: str | None = None,
    embeddings: Lazy | None = None,
) -> str:
    from tracehouse.reports import searching
    from tracehouse.search.semantic import check_mode

    _page(limit, 0, MAX_HITS)
    if not query.strip():
        raise ConfigError('query: give words to find, e.g. retry policy or "a phrase"')
    if mode is not None:
        try:
            check_mode(mode)
        except ValueError as error:
            raise ConfigError(f"mode: {error}") from None
    filters = build_search_filters(
        store, providers=providers, project=project, session=session, kinds=types, tool=tool,
        since=since, until=until, limit=limit,
    )  # fmt: skip
    hits = searching.search(store, query, filters, mode=mode, embeddings=embeddings).hits
    if not hits:
        return f"No hits for {query!r}. Try fewer words, a prefix (migrat*) or no filters."
    lines = [f"{len(hits)} {'hit' if len(hits) == 1 else 'hits'} for {query!r}, best first:"]
    for n, hit in enumerate(hits, 1):
        lines.append("")
        lines.extend(_hit(n, hit))
    return "\n".join(lines)


def _hit(n: int, hit: Hit) -> Iterator[str]:
    what = f"{hit.kind} {hit.tool_name}" if hit.tool_name else hit.kind
    if hit.repeats > 1:
        what += f" ×{hit.repeats}"
    where = [hit.label, hit.provider, hit.project, _utc(hit.created_at), what]
    yield f"{n}. " + " · ".join(str(w) for w in where if w)
    yield "   " + hit.snippet.replace(MARK[0], "**").replace(MARK[1], "**")
    around = hit.message_id or (hit.id if hit.kind == "tool" else None)
    opened = f', around="{around}"' if around else ""
    yield f'   open: read_session(session="{hit.label}"{opened})'


def list_sessions(
    store: SessionStore,
    *,
    providers: Sequence[str] = (),
    project: str | None = None,
    models: Sequence[str] = (),
    since: str | None = None,
    until: str | None = None,
    subagents: bool = False,
    limit: int = 20,
    offset: int = 0,
) -> str:
    _page(limit, offset, MAX_PAGE)
    filters = _filters(store, providers, project, models, since, until, subagents)
    rows = listed(store, filters, limit, offset=offset)
    total = count_sessions(store, filters)
    if not rows:
        return f"No sessions{' past ' + str(offset) if offset else ''} match ({total:,} in all)."
    lines = [
        f"Sessions {offset + 1}–{offset + len(rows)} of {total:,}, most recently active first"
        " (times UTC):",
        "",
        "| label | agent | last active | project | msgs | tokens | title |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        title = _cell(session_title(r))
        if r["is_subagent"]:
            title = f"↳ {title}"
        if r["source_missing_at"]:
            title += " (source gone)"
        tokens = f"{r['total_tokens']:,}" if r["total_tokens"] is not None else "—"
        lines.append(
            f"| {r['label']} | {r['source_provider']} | {_utc(r['updated_at'] or r['created_at'])}"
            f" | {_cell(r['project'] or '')} | {r['message_count']} | {tokens} | {title} |"
        )
    if offset + len(rows) < total:
        lines.append(f"\nNext page: list_sessions(offset={offset + len(rows)}, same filters).")
    lines.append('Read one: read_session(session="<label>").')
    return "\n".join(lines)


def read(
    store: SessionStore,
    session: str,
    *,
    around: str | None = None,
    start: int | None = None,
    budget: int = 8000,
    result_chars: int = 1500,
    since: str | None = None,
) -> str:
    return read_session(
        store, session, around=around, start=start, budget=budget, result_chars=result_chars,
        since=since,
    ).text  # fmt: skip


def touched(
    store: SessionStore,
    path: str,
    *,
    providers: Sequence[str] = (),
    project: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 20,
    offset: int = 0,
) -> str:
    _page(limit, offset, MAX_PAGE)
    filters = _filters(store, providers, project, (), since, until, True)
    found, more = files_touched(store, path, filters, limit=limit, offset=offset)
    if not found:
        return (f"No tool call{' past ' + str(offset) if offset else ''} names {path!r}."
                " Try its last part alone (the file name), or search for it.")  # fmt: skip
    lines = [f"Tool calls that touched {path!r}, newest first (times UTC):"]
    by_session: dict[str, list[Touch]] = {}
    for t in found:
        by_session.setdefault(t.label, []).append(t)
    for label, touches in by_session.items():
        first = touches[0]
        title = _cell(" ".join((first.title or "").split()))[:100]
        lines.append(f"\n## {label} · {first.provider}" + (f" · {title}" if title else ""))
        for t in touches:
            lines.append(f"- {_utc(t.at) or 'time not recorded'} · {t.action} {t.path}"
                         f" ({t.tool_name}; open: read_session(session=\"{label}\","
                         f" around=\"{t.tool_call_id}\"))")  # fmt: skip
    if more:
        lines.append(f"\nNext page: files_touched(path={path!r}, offset={offset + len(found)}).")
    return "\n".join(lines)


def usage_report(
    store: SessionStore,
    prices: Prices,
    *,
    by: str = "daily",
    providers: Sequence[str] = (),
    project: str | None = None,
    models: Sequence[str] = (),
    since: str | None = None,
    until: str | None = None,
) -> str:
    filters = _filters(store, providers, project, models, since, until, True)
    report = usage(store, by, filters, prices, utc=True)
    heading = {"daily": "date (UTC)", "weekly": "week", "monthly": "month"}.get(by, by)
    lines = [
        f"Token usage by {by}, cost at API list prices ({report.prices}); input is what no cache"
        " served, output includes reasoning, total is all of them:",
        "",
        f"| {heading} | agent | input | cache write | cache read | output | reasoning | total"
        " | cost |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for line in report.lines:
        lines.append(_usage_row(line))
    lines.append(_usage_row(report.total).replace("| total | all |", "| **total** | |", 1))
    if report.unpriced:
        models_ = ", ".join(f"{m} ({n:,} tokens)" for m, n in report.unpriced.items())
        lines.append(f"\nNot in the cost (no price known): {models_}.")
    return "\n".join(lines)


def _usage_row(line: Line) -> str:
    t = line.tokens
    cost = line.known_cost
    shown = "—" if cost is None else f"${cost:,.2f}" + ("*" if line.unpriced else "")
    counts = " | ".join(f"{n:,}" for n in (t.fresh, t.cache_write, t.cache_read, t.output,
                                            t.reasoning, t.total))  # fmt: skip
    return f"| {_cell(line.key)} | {line.provider} | {counts} | {shown} |"


def _filters(
    store: SessionStore,
    providers: Sequence[str],
    project: str | None,
    models: Sequence[str],
    since: str | None,
    until: str | None,
    subagents: bool,
) -> SessionFilters:
    return build_session_filters(
        providers=providers, project=project, models=models, since=since, until=until,
        subagents=subagents, utc=True, store=store,
    )  # fmt: skip


def _page(limit: int, offset: int, most: int) -> None:
    if not 1 <= limit <= most:
        raise ConfigError(f"limit {limit}: from 1 to {most}")
    if offset < 0:
        raise ConfigError(f"offset {offset}: 0 or more")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _utc(at: Any) -> str:
    return str(at)[:16].replace("T", " ") if at else ""
