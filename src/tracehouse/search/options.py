"""Search filters from what a person typed: validated where they enter, labels resolved."""

from __future__ import annotations

from collections.abc import Sequence

from tracehouse import validate
from tracehouse.errors import ConfigError
from tracehouse.search.hits import KINDS, SearchFilters
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import session_family
from tracehouse.timespec import to_utc_iso

MAX_LIMIT = 1000


def build_filters(
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
    for name in providers:
        validate.provider(name)
    wrong = [k for k in kinds if k not in KINDS]
    if wrong:
        raise ConfigError(f"--type {wrong[0]!r}: one of {', '.join(KINDS)}")
    validate.count(limit, "--limit", MAX_LIMIT)
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
