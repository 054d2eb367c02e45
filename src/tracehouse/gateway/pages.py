"""The gateway's web view: the session list (filters, search), each session's page, sign-in.

Pages are rendered on the server with the HTML export's templates, so a session looks the same
exported or served, and everything reads without JavaScript; the one script an open session page
runs asks every second whether its session changed and redraws it when it did (what a pusher's
`sync live` sends appears within about a second). A browser cannot send a bearer header, so a
read token given once on the sign-in page is kept in an HttpOnly, SameSite=Strict cookie.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qs, quote

import orjson
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from tracehouse.errors import TracehouseError
from tracehouse.exports.html import Pages
from tracehouse.exports.timeline import session_title
from tracehouse.gateway import security
from tracehouse.gateway.app import COOKIE, Ledger, grant
from tracehouse.gateway.tokens import grant_for
from tracehouse.gateway.views import session_filters
from tracehouse.model.tables import PROVIDERS
from tracehouse.reports.filters import list_sessions
from tracehouse.search.hits import MARK
from tracehouse.search.options import build_filters
from tracehouse.sinks.reads import find_session, session_detail
from tracehouse.timespec import local_time

if TYPE_CHECKING:
    import jinja2

router = APIRouter(include_in_schema=False)


@lru_cache(maxsize=1)
def templates() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [
                jinja2.PackageLoader("tracehouse.gateway", "templates"),
                jinja2.PackageLoader("tracehouse.exports", "templates"),
            ]
        ),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _page(name: str, status_code: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(templates().get_template(name).render(**values), status_code=status_code)


def _signed_in(request: Request, store: Any) -> bool:
    try:
        grant(request, store, "read")
    except Exception:
        return False
    return True


def _href(label: str) -> str:
    return "/s/" + quote(label, safe="")


def _when(iso: str | None) -> str:
    return local_time(iso) if iso else "—"


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request) -> HTMLResponse:
    return _login(request, 200, None)


def _login(request: Request, status: int, error: str | None) -> HTMLResponse:
    """The sign-in form with a fresh CSRF token, in its field and in a cookie to match."""
    csrf = security.csrf_token()
    answer = _page("login.html.j2", status, error=error, csrf=csrf)
    secure = request.url.scheme == "https"
    answer.set_cookie(security.CSRF_COOKIE, csrf, httponly=True, samesite="strict",
                      secure=secure, path="/login")  # fmt: skip
    return answer


@router.post("/login")
async def login(request: Request, store: Ledger) -> Response:
    failures = request.app.state.failures
    address = request.client.host if request.client else "-"
    wait = failures.blocked_for(address)
    if wait:
        answer = _page("error.html.j2", 429, error="Too many failed sign-ins; try again soon.")
        answer.headers["Retry-After"] = str(int(wait) + 1)
        return answer
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    if not security.csrf_matches(
        request.cookies.get(security.CSRF_COOKIE), (form.get("csrf") or [""])[0]
    ):
        failures.add(address)
        return _login(request, 403, "The form expired; sign in again.")
    token = (form.get("token") or [""])[0].strip()
    found = grant_for(store, token) if token else None
    if found is None or found.scope != "read":
        failures.add(address)
        return _login(request, 401, "That is not a read token of this gateway.")
    signed_in = RedirectResponse("/", status_code=303)
    secure = request.url.scheme == "https"
    signed_in.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=secure)
    signed_in.delete_cookie(security.CSRF_COOKIE, path="/login")
    return signed_in


@router.get("/", response_model=None)
def session_list(
    request: Request,
    store: Ledger,
    q: str = "",
    provider: str = "",
    project: str = "",
    since: str = "",
    until: str = "",
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> HTMLResponse | RedirectResponse:
    if not _signed_in(request, store):  # a page, not the API: send the browser to sign in
        return RedirectResponse("/login", status_code=303)
    shown: dict[str, Any] = {
        "q": q,
        "provider": provider,
        "project": project,
        "since": since,
        "until": until,
    }
    rows: list[dict[str, Any]] = []
    hits = None
    error = None
    try:
        if q.strip():
            filters = build_filters(
                store, providers=[provider] if provider else (), project=project or None,
                since=since or None, until=until or None, limit=min(limit, 200),
            )  # fmt: skip
            hits = [_hit(h) for h in store.search(q, filters)]
        else:
            filters = session_filters(store, [provider] if provider else [], project, since, until)
            rows = [_row(r) for r in list_sessions(store, filters, limit)]
    except TracehouseError as exc:  # a bad filter: say so on the page, as the CLI would
        error = str(exc)
    return _page("list.html.j2", rows=rows, hits=hits, error=error, providers=PROVIDERS, **shown)


def _row(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "href": _href(r["label"]),
        "label": r["label"],
        "title": _clipped(session_title(r)),
        "provider": r["source_provider"],
        "project": r["project"] or "",
        "host": r.get("host") or "",
        "when": _when(r["updated_at"] or r["created_at"]),
        "messages": r["message_count"] or 0,
        "tokens": f"{r['total_tokens']:,}" if r["total_tokens"] else "—",
        "subagent": bool(r["is_subagent"]),
    }


def _clipped(title: str, most: int = 80) -> str:
    """A title fit for one row of the list (a first prompt can run to pages)."""
    return title if len(title) <= most else title[: most - 1].rstrip() + "…"


def _hit(hit: Any) -> dict[str, Any]:
    parts: list[tuple[str, bool]] = []
    for i, piece in enumerate(hit.snippet.split(MARK[0])):
        if i == 0:
            parts.append((piece, False))
            continue
        marked, _, rest = piece.partition(MARK[1])
        parts += [(marked, True), (rest, False)]
    at = f"#{hit.message_id}" if hit.message_id else ""
    return {
        "href": _href(hit.label) + at,
        "label": hit.label,
        "kind": hit.kind,
        "provider": hit.provider,
        "when": _when(hit.created_at),
        "parts": parts,
    }


@router.get("/s/{label}", response_model=None)
def session_page(label: str, request: Request, store: Ledger) -> HTMLResponse | RedirectResponse:
    if not _signed_in(request, store):
        return RedirectResponse("/login", status_code=303)
    try:
        session_id = find_session(store, label)["session_id"]
    except TracehouseError as exc:
        return _page("error.html.j2", 404, error=str(exc))
    detail = session_detail(store, session_id)
    names = {c["session_id"]: c["label"] for c in detail["children"]}
    names.update(detail.get("labels", {}))
    pages = Pages(
        names,
        _when,
        lambda sid: session_detail(store, sid),
        href=_href,
        home="/",
        live=f"/s/{quote(label, safe='')}/version",
        nonce=request.state.nonce,
    )
    return HTMLResponse(pages.session(detail))


@router.get("/s/{label}/version")
def session_version(label: str, request: Request, store: Ledger) -> Response:
    """What an open page polls: the session's fingerprint changes with its content."""
    grant(request, store, "read")
    row = find_session(store, label)
    body = {"fingerprint": row["fingerprint"], "updatedAt": row["updated_at"]}
    return Response(orjson.dumps(body), media_type="application/json")
