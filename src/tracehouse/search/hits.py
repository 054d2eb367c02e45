"""What a search returns and what narrows it, shared by both backends.

A hit is one place where the query matched: a message's text, its thinking, a tool call
(name, parameters, output, error) or a session's title. The filters are plain values here; the
SQL that applies them is written once (`filter_sql`) with `?` placeholders, which both stores'
`query` accept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

MARK = ("\x02", "\x03")  # snippet highlight markers: never in stored text that is shown
SNIPPET_WORDS = 24

# What `--type` selects, and where each kind of hit comes from.
KINDS = ("user", "assistant", "system", "tool", "thinking", "host", "title")
MESSAGE_TYPES = {"user": "user", "assistant": "assistant", "system": "system", "host": "host"}


# The columns each kind of hit returns, the same on both backends: id, where `--at` opens,
# message type, time (`hit_at`), tool name.
MESSAGE_COLUMNS = (
    "m.message_id AS id, m.message_id, m.message_type, m.created_at AS hit_at, NULL AS tool_name"
)
CALL_COLUMNS = (
    "t.tool_call_id AS id, t.message_id, NULL AS message_type, t.started_at AS hit_at, t.tool_name"
)
SESSION_COLUMNS = (
    "s.session_id AS id, NULL AS message_id, NULL AS message_type, s.updated_at AS hit_at,"
    " NULL AS tool_name"
)


@dataclass(frozen=True)
class SearchFilters:
    providers: tuple[str, ...] = ()
    project: str | None = None  # a workspace path or project name, matched as a prefix
    session_ids: tuple[str, ...] = ()  # these sessions only (a session and its subagents)
    models: tuple[str, ...] = ()  # the session's model begins with one of these (lower case)
    kinds: tuple[str, ...] = ()  # any of KINDS; empty: all
    tool: str | None = None  # only calls of this tool (case-insensitive)
    since: str | None = None  # UTC ISO timestamps, as the ledger stores them
    until: str | None = None
    limit: int = 20

    def wants(self, kind: str) -> bool:
        if self.tool is not None:
            return kind == "tool"
        return not self.kinds or kind in self.kinds


@dataclass(frozen=True)
class Hit:
    kind: str  # user, assistant, system, host, tool (a call or a tool result), thinking, title
    id: str  # the message, tool call or session that matched
    message_id: str | None  # where `sessions show --at` opens the transcript
    session_id: str
    label: str
    provider: str
    project: str | None
    created_at: str | None
    snippet: str  # the matched words between MARK[0] and MARK[1]
    score: float  # higher is better (BM25 on SQLite, ts_rank on PostgreSQL)
    tool_name: str | None = None
    repeats: int = 1  # identical hits of the session it stands for (the same call made twice)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("extra")
        out["snippet"] = self.snippet.replace(MARK[0], "").replace(MARK[1], "")
        out["highlights"] = highlights(self.snippet)
        return out


def row_hit(kind: str | None, row: Sequence[Any], score: float, snippet: str = "") -> Hit:
    """A hit from the columns every source selects, in their order: the hit's own (id,
    message_id, message_type, hit_at, tool_name), then its session's (id, label, provider,
    project). `kind` None: the message type is the kind."""
    hit_id, message_id, message_type, created_at, tool_name = row[:5]
    session_id, label, provider, project = row[5:9]
    return Hit(
        kind=str(kind or message_type),
        id=str(hit_id),
        message_id=None if message_id is None else str(message_id),
        session_id=str(session_id),
        label=str(label),
        provider=str(provider),
        project=None if project is None else str(project),
        created_at=None if created_at is None else str(created_at),
        snippet=snippet,
        score=float(score),
        tool_name=None if tool_name is None else str(tool_name),
    )


def highlights(snippet: str) -> list[str]:
    """The marked words of a snippet, in order."""
    out = []
    for part in snippet.split(MARK[0])[1:]:
        out.append(part.split(MARK[1], 1)[0])
    return out


def message_types(filters: SearchFilters) -> list[str] | None:
    """The message types a search of message text may return (None: any; []: none)."""
    if filters.tool is not None:
        return []
    if not filters.kinds:
        return None
    # tool results are indexed on their calls, never as messages
    return [MESSAGE_TYPES[k] for k in filters.kinds if k in MESSAGE_TYPES]


def conditions(
    filters: SearchFilters, kind: str | None, *, table: str, alias: str, at: str
) -> tuple[str, list[Any]] | None:
    """The WHERE conditions of one source of hits (`kind` None: message text, whose kind is
    its type), or None when the filters want nothing from it."""
    if kind is not None and not filters.wants(kind):
        return None
    types = message_types(filters) if kind is None else None
    if types == []:
        return None
    return filter_sql(filters, table=table, alias=alias, at=at, types=types)


def filter_sql(
    filters: SearchFilters, *, table: str, alias: str, at: str, types: list[str] | None = None
) -> tuple[str, list[Any]]:
    """WHERE conditions over the joined `sessions s` and the hit's table (`alias`), whose time
    column is `at`; `types` limits message hits. Starts with ' AND' when not empty."""
    sql: list[str] = []
    params: list[Any] = []
    if types is not None:
        sql.append(f"{alias}.message_type IN ({_marks(types)})")
        params.extend(types)
    if filters.tool is not None and table == "tool_calls":
        sql.append(f"lower({alias}.tool_name) = lower(?)")
        params.append(filters.tool)
    owner, owner_params = session_conditions(
        "s", providers=filters.providers, project=filters.project,
        session_ids=filters.session_ids, models=filters.models,
    )  # fmt: skip
    sql.extend(owner)
    params.extend(owner_params)
    if filters.since:
        sql.append(f"{alias}.{at} >= ?")
        params.append(filters.since)
    if filters.until:
        sql.append(f"{alias}.{at} < ?")
        params.append(filters.until)
    return "".join(f" AND {s}" for s in sql), params


def session_conditions(
    alias: str,
    *,
    providers: Sequence[str],
    project: str | None,
    session_ids: Sequence[str],
    models: Sequence[str] = (),
    model_column: str | None = None,
) -> tuple[list[str], list[Any]]:
    """The conditions on a hit's or a report's session (`sessions {alias}`): its provider, its
    project (workspace path or name, a prefix), its id and its model (a name or its beginning,
    lower case; `model_column` when a report counts turns by their own model); the same for
    search and reports."""
    sql: list[str] = []
    params: list[Any] = []
    if models:
        like = f"lower({model_column or f'{alias}.model'}) LIKE ? ESCAPE '\\'"
        sql.append("(" + " OR ".join(like for _ in models) + ")")
        params.extend(_like_prefix(m) for m in models)
    if providers:
        sql.append(f"{alias}.source_provider IN ({_marks(providers)})")
        params.extend(providers)
    if project:
        n = len(project)
        sql.append(
            f"(substr({alias}.workspace_path, 1, ?) = ? OR substr({alias}.project, 1, ?) = ?)"
        )
        params.extend([n, project, n, project])
    if session_ids:
        sql.append(f"{alias}.session_id IN ({_marks(session_ids)})")
        params.extend(session_ids)
    return sql, params


def _like_prefix(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))


def merge(hits: list[Hit], limit: int) -> list[Hit]:
    """The best `limit` hits over every source: score first, then the newest (then by kind and
    id, so that the order never depends on which source answered first)."""
    hits.sort(key=lambda h: (h.kind, h.id))
    hits.sort(key=lambda h: h.created_at or "", reverse=True)
    hits.sort(key=lambda h: h.score, reverse=True)
    return collapse(hits)[:limit]


def collapse(hits: list[Hit]) -> list[Hit]:
    """Identical hits of one session (the same call run twice, a prompt sent again) as the
    first of them, counting the others in its `repeats`."""
    kept: dict[tuple[Any, ...], Hit] = {}
    for hit in hits:
        key = (hit.session_id, hit.kind, hit.tool_name, hit.snippet)
        first = kept.get(key)
        kept[key] = hit if first is None else replace(first, repeats=first.repeats + 1)
    return list(kept.values())
