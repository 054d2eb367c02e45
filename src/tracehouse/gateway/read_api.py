"""The gateway's `/v1` read routes: the sessions, one session (as its `sessions.import` item, or
as a transcript a reader shows), usage and search, for a read token. Each is as thin as a CLI
command: the library reads, the route says what came back."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from tracehouse.exports.reading import FORMATS, reading
from tracehouse.gateway import openapi
from tracehouse.gateway.api import json_answer, known_query
from tracehouse.gateway.deps import Ledger, Reader
from tracehouse.gateway.views import (
    list_prices,
    session_document,
    session_filters,
    session_summaries,
    summary,
)
from tracehouse.reports.filters import ORDERS, build_search_filters
from tracehouse.reports.usage import PERIODS, usage
from tracehouse.search.semantic import MODES

router = APIRouter(prefix="/v1", dependencies=[Depends(known_query)])


@router.get("/sessions", responses=openapi.responses("SessionList", 400, 401, 403), tags=["read"])
def sessions(
    grant: Reader,
    store: Ledger,
    provider: Annotated[list[str] | None, Query()] = None,
    project: str | None = None,
    since: str | None = None,
    until: str | None = None,
    subagents: bool = True,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    order: Annotated[str, Query(pattern=f"^({'|'.join(ORDERS)})$")] = "updated",
) -> Response:
    """The sessions, most recently active first (or the most tokens or messages, or the most
    recently created), with their provenance."""
    found = session_summaries(store, provider or [], project, since, until, subagents, limit,
                              order)  # fmt: skip
    return json_answer({"sessions": found})


@router.get(
    "/sessions/{label}", responses=openapi.responses("Session", 401, 403, 404), tags=["read"]
)
def session(label: str, grant: Reader, store: Ledger) -> Response:
    """One session: its rows in the `sessions.import` item shape, with its lineage."""
    return json_answer(session_document(store, label))


@router.get(
    "/sessions/{label}/transcript",
    responses=openapi.responses("Transcript", 400, 401, 403, 404),
    tags=["read"],
)
def transcript(
    label: str,
    grant: Reader,
    store: Ledger,
    format: Annotated[str, Query(pattern=f"^({'|'.join(FORMATS)})$")] = "text",
    at: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    thinking: bool = False,
) -> Response:
    """One session as a reader shows it: its transcript as `tracehouse sessions show` prints
    it (`at`, a message or tool call id, opens it there; `thinking` unfolds the thinking), or
    as Markdown as `tracehouse export` writes it (times in UTC); with the summaries of its
    parent and of its subagents and threads, for `tracehouse browse` over the gateway."""
    read = reading(store, label, format=format, at=at, thinking=thinking, utc=True)
    return json_answer({
        **summary(read.session),
        "format": format,
        "text": read.text,
        "parent": None if read.parent is None else summary(read.parent),
        "children": [summary(c) for c in read.children],
    })  # fmt: skip


@router.get("/usage", responses=openapi.responses("Usage", 400, 401, 403), tags=["read"])
def usage_report(
    grant: Reader,
    store: Ledger,
    period: Annotated[str, Query(pattern=f"^({'|'.join(PERIODS)})$")] = "daily",
    provider: Annotated[list[str] | None, Query()] = None,
    machine: Annotated[list[str] | None, Query()] = None,
    project: str | None = None,
    model: Annotated[list[str] | None, Query()] = None,
    since: str | None = None,
    until: str | None = None,
    subagents: bool = True,
    breakdown: bool = False,
) -> Response:
    """Tokens and cost per day, week, month, session, project, model or machine: what
    `tracehouse usage PERIOD --json` prints, with the same filters."""
    filters = session_filters(store, provider or [], project, since, until, subagents,
                              models=model or [], machines=machine or [])  # fmt: skip
    return json_answer(usage(store, period, filters, list_prices(), breakdown=breakdown).to_json())


@router.get("/usage/blocks", responses=openapi.responses("UsageBlocks", 400, 401, 403),
            tags=["read"])  # fmt: skip
def usage_blocks(
    grant: Reader,
    store: Ledger,
    provider: Annotated[list[str] | None, Query()] = None,
    machine: Annotated[list[str] | None, Query()] = None,
    project: str | None = None,
    model: Annotated[list[str] | None, Query()] = None,
    since: str | None = None,
    until: str | None = None,
    subagents: bool = True,
) -> Response:
    """The 5-hour blocks per agent, the active ones with their burn rate and projection: what
    `tracehouse usage blocks --json` prints, with the same filters."""
    from datetime import UTC, datetime

    from tracehouse.reports.blocks import blocks

    filters = session_filters(store, provider or [], project, since, until, subagents,
                              models=model or [], machines=machine or [])  # fmt: skip
    prices = list_prices()
    now = datetime.now(UTC)
    return json_answer({"prices": prices.source,
                  "blocks": [b.to_json(now) for b in blocks(store, filters, prices)]})  # fmt: skip


@router.get("/usage/limits", responses=openapi.responses("UsageLimits", 401, 403),
            tags=["read"])  # fmt: skip
def usage_limits(request: Request, grant: Reader, store: Ledger) -> Response:
    """The team's spending limits (`[[limits]]` in the gateway's config) with what the current
    day, week or month spent against each: what `tracehouse usage limits --json` prints."""
    from tracehouse.reports.limits import standings

    prices = list_prices()
    found = standings(store, request.app.state.config.limits, prices)
    return json_answer({"prices": prices.source, "limits": [s.to_json() for s in found]})


@router.get("/search", responses=openapi.responses("SearchHits", 400, 401, 403, 404), tags=["read"])
def search(
    request: Request,
    grant: Reader,
    store: Ledger,
    q: Annotated[str, Query(min_length=1, max_length=1000)],
    provider: Annotated[list[str] | None, Query()] = None,
    project: str | None = None,
    session: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
    mode: Annotated[str | None, Query(pattern=f"^({'|'.join(MODES)})$")] = None,
) -> Response:
    """Search, ranked, each hit with its snippet: by the query's words (`lexical`), by its
    meaning (`semantic`) or both (`hybrid`, the default where the ledger holds vectors of the
    gateway's model)."""
    from tracehouse.reports import searching

    filters = build_search_filters(
        store, providers=provider or (), project=project, session=session,
        since=since, until=until, limit=limit,
    )  # fmt: skip
    model = request.app.state.embedding.model
    answer = searching.search(store, q, filters, mode=mode, embeddings=model)
    hits = [h.to_json() for h in answer.hits]
    return json_answer({"query": q, "mode": answer.mode, "hits": hits})
