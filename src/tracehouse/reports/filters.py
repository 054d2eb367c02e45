"""The filters every reading command shares (`sessions list`, `export`, `usage`, `search`):
validated where they enter, turned into SQL once, over any store's `query` (`?` placeholders).

Times: a session is in `--since/--until` when it was active then (its last activity is not
before `since`, its start is before `until`); `usage` counts the turns inside the window
instead, so that a month's report holds that month's tokens whatever session they belong to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracehouse import validate
from tracehouse.errors import ConfigError
from tracehouse.search.hits import KINDS, SearchFilters, session_conditions
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import LIST_COLUMNS, MAX_LIST, session_family
from tracehouse.timespec import to_utc_iso


@dataclass(frozen=True)
class SessionFilters:
    providers: tuple[str, ...] = ()
    project: str | None = None  # a workspace path or project name, matched as a prefix
    models: tuple[str, ...] = ()  # a model name or its prefix (`claude-opus`), any case
    since: str | None = None  # UTC ISO, as the ledger stores times
    until: str | None = None
    subagents: bool = True
    session_ids: tuple[str, ...] = ()  # `--label`s resolved: the sessions and their subagents
    machines: tuple[str, ...] = ()  # the hosts sessions were imported on or pushed from


def build_session_filters(
    *,
    providers: Sequence[str] = (),
    project: str | None = None,
    models: Sequence[str] = (),
    since: str | None = None,
    until: str | None = None,
    subagents: bool = True,
    labels: Sequence[str] = (),
    utc: bool = False,
    store: SessionStore | None = None,
    machines: Sequence[str] = (),
) -> SessionFilters:
    """`labels` (labels, ids, source ids or a unique beginning of one) need the `store`."""
    for name in providers:
        validate.provider(name)
    for model in models:
        if not model.strip():
            raise ConfigError("--model '': give a model name or its beginning, e.g. claude-opus")
    start = to_utc_iso(since, option="--since", utc=utc) if since else None
    end = to_utc_iso(until, option="--until", utc=utc) if until else None
    if start and end and start >= end:
        raise ConfigError(f"--since {since!r} is not before --until {until!r}")
    return SessionFilters(
        providers=tuple(providers),
        project=project or None,
        models=tuple(m.strip().lower() for m in models),
        since=start,
        until=end,
        subagents=subagents,
        session_ids=_families(store, labels),
        machines=tuple(m for m in machines if m),
    )


def _families(store: SessionStore | None, labels: Sequence[str]) -> tuple[str, ...]:
    if not labels:
        return ()
    if store is None:
        raise ValueError("--label needs the store to resolve labels")
    found: dict[str, None] = {}
    for label in labels:
        found.update(dict.fromkeys(session_family(store, label)))
    return tuple(found)


def session_sql(
    filters: SessionFilters, alias: str = "s", *, times: bool = True, model: str | None = None
) -> tuple[str, list[Any]]:
    """WHERE conditions over `sessions {alias}` (' AND …', or '' for none) and their values.
    `times` False leaves the time window to the caller, and `model` names the model column
    when it is not the session's (usage filters turns by their time and model)."""
    a = alias
    sql, params = session_conditions(
        a, providers=filters.providers, project=filters.project, session_ids=filters.session_ids,
        models=filters.models, model_column=model,
    )  # fmt: skip
    if not filters.subagents:
        sql.append(f"NOT coalesce({a}.is_subagent, FALSE)")
    if filters.machines:
        sql.append(f"{a}.host IN ({', '.join('?' * len(filters.machines))})")
        params.extend(filters.machines)
    if times and filters.since:
        sql.append(f"coalesce({a}.updated_at, {a}.created_at) >= ?")
        params.append(filters.since)
    if times and filters.until:
        sql.append(f"{a}.created_at < ?")
        params.append(filters.until)
    return "".join(f" AND {s}" for s in sql), params


def count_sessions(store: SessionStore, filters: SessionFilters | None = None) -> int:
    """How many sessions the filters select, beyond any limit."""
    where, params = session_sql(filters or SessionFilters())
    rows = store.query(f"SELECT count(*) AS n FROM sessions s WHERE 1 = 1{where}", params)
    return int(rows[0]["n"])


# How a list may be sorted: each a value that is NULL for a session that lacks it (last on both
# stores: PostgreSQL puts NULLs first), largest or newest first.
ORDERS = {
    "updated": "coalesce(updated_at, created_at)",
    "created": "created_at",
    "tokens": "total_tokens",
    "messages": "message_count",
}


def list_sessions(
    store: SessionStore,
    filters: SessionFilters | None = None,
    limit: int = 50,
    offset: int = 0,
    order: str = "updated",
) -> list[dict[str, Any]]:
    """The filtered sessions, most recently active first (or by `order`), `offset` skipped."""
    validate.count(limit, "--limit", MAX_LIST)
    if order not in ORDERS:
        raise ConfigError(f"sort {order!r}: one of {', '.join(ORDERS)}")
    where, params = session_sql(filters or SessionFilters())
    key = ORDERS[order]
    return store.query(
        f"SELECT {LIST_COLUMNS} FROM sessions s WHERE 1 = 1{where}"
        f" ORDER BY {key} IS NULL, {key} DESC, session_id LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )


SEARCH_LIMIT = 1000  # hits one search returns at most


def build_search_filters(
    store: SessionStore,
    *,
    providers: Sequence[str] = (),
    project: str | None = None,
    models: Sequence[str] = (),
    session: str | None = None,
    kinds: Sequence[str] = (),
    tool: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 20,
) -> SearchFilters:
    """A search's filters from what a person typed; `session` takes its subagents along."""
    for name in providers:
        validate.provider(name)
    wrong = [k for k in kinds if k not in KINDS]
    if wrong:
        raise ConfigError(f"--type {wrong[0]!r}: one of {', '.join(KINDS)}")
    validate.count(limit, "--limit", SEARCH_LIMIT)
    for model in models:
        if not model.strip():
            raise ConfigError("--model '': give a model name or its beginning, e.g. claude-opus")
    return SearchFilters(
        providers=tuple(providers),
        project=project or None,
        models=tuple(m.strip().lower() for m in models),
        session_ids=session_family(store, session) if session else (),
        kinds=tuple(kinds),
        tool=tool or None,
        since=to_utc_iso(since, option="--since") if since else None,
        until=to_utc_iso(until, option="--until") if until else None,
        limit=limit,
    )
