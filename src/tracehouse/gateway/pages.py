"""The gateway's web view: the session list (filters, search), each session's page, sign-in.

Pages are rendered on the server with the HTML export's templates, so a session looks the same
exported or served, and everything reads without JavaScript; the one script an open session page
runs asks every second whether its session changed and redraws it when it did (what a pusher's
`sync live` sends appears within about a second). A browser cannot send a bearer header, so a
read token given once on the sign-in page is kept in an HttpOnly, SameSite=Strict cookie.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from html import escape
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qs, quote

import orjson
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from tracehouse.errors import TracehouseError
from tracehouse.exports.html import Pages
from tracehouse.exports.rendering import shown_text
from tracehouse.gateway import security
from tracehouse.gateway.deps import COOKIE, Ledger, grant
from tracehouse.gateway.local_view import ONCE_PATH, local_path
from tracehouse.gateway.tokens import grant_for
from tracehouse.gateway.views import list_prices, session_filters
from tracehouse.model.tables import PROVIDERS
from tracehouse.model.timeline import session_title
from tracehouse.reports import searching
from tracehouse.reports.filters import (
    ORDERS,
    SessionFilters,
    build_search_filters,
    count_sessions,
    list_sessions,
)
from tracehouse.reports.usage import usage
from tracehouse.search.hits import MARK
from tracehouse.search.semantic import MODES
from tracehouse.store.reads import find_session, session_detail
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
        finalize=shown_text,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_page(name: str, status_code: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(templates().get_template(name).render(**values), status_code=status_code)


def signed_in(request: Request, store: Any) -> bool:
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
    answer = render_page("login.html.j2", status, error=error, csrf=csrf)
    secure = request.url.scheme == "https"
    answer.set_cookie(security.CSRF_COOKIE, csrf, httponly=True, samesite="strict",
                      secure=secure, path="/login")  # fmt: skip
    return answer


@router.get(ONCE_PATH, response_model=None)
def login_once(request: Request, code: str = "", next: str = "/") -> HTMLResponse:
    """`tracehouse open`'s one-time link: its code, the first time, for the view's own token."""
    local = request.app.state.local_access
    token = local.exchange(code) if local is not None and code else None
    if token is None:
        return render_page(
            "error.html.j2", 403,
            error="This link was used already, or is not this view's: run `tracehouse open`"
            " again.",
        )  # fmt: skip
    # A page of this view that moves on, not a redirect: the link arrives from another site (a
    # file, a terminal), and a browser keeps a SameSite=Strict cookie from the redirect that
    # follows such a navigation; the navigation this page starts is the view's own.
    then = escape(local_path(next), quote=True)
    signed_in = HTMLResponse(
        f'<!doctype html><meta charset=utf-8><meta http-equiv="refresh" content="0;url={then}">'
        f'<title>tracehouse</title><a href="{then}">Open the ledger</a>'
    )
    signed_in.set_cookie(COOKIE, token, httponly=True, samesite="strict")
    return signed_in


@router.post("/login")
async def login(request: Request, store: Ledger) -> Response:
    failures = request.app.state.failures
    address = request.client.host if request.client else "-"
    wait = failures.blocked_for(address)
    if wait:
        answer = render_page(
            "error.html.j2", 429, error="Too many failed sign-ins; try again soon."
        )
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


PAGE = 50  # sessions a list page shows


@dataclass
class PageFilters:
    """The filters the list and the usage page share, as their query parameters."""

    provider: str = ""
    machine: str = ""
    project: str = ""
    model: str = ""
    since: str = ""
    until: str = ""

    def of(self, store: Any) -> Any:
        return session_filters(
            store, [self.provider] if self.provider else [], self.project, self.since,
            self.until, models=[self.model] if self.model else [],
            machines=[self.machine] if self.machine else [],
        )  # fmt: skip


Filters = Annotated[PageFilters, Depends()]
# The search box's modes, as the page names them ("": hybrid where the ledger has vectors).
SEARCH_MODES = (
    ("", "auto"),
    ("lexical", "by words"),
    ("semantic", "by meaning"),
    ("hybrid", "both (hybrid)"),
)


@router.get("/", response_model=None)
def session_list(
    request: Request,
    store: Ledger,
    shown: Filters,
    q: str = "",
    mode: Annotated[str, Query(pattern=f"^({'|'.join(MODES)})?$")] = "",
    sort: str = "updated",
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
    per: Annotated[int, Query(ge=1, le=200)] = PAGE,
) -> HTMLResponse | RedirectResponse:
    if not signed_in(request, store):  # a page, not the API: send the browser to sign in
        return RedirectResponse("/login", status_code=303)
    listing = Listing(per)
    try:
        if q.strip():
            filters = build_search_filters(
                store, providers=[shown.provider] if shown.provider else (),
                project=shown.project or None, since=shown.since or None,
                until=shown.until or None, limit=200,
            )  # fmt: skip
            model = request.app.state.embedding.model
            found = searching.search(store, q, filters, mode=mode or None, embeddings=model)
            listing.hits = [_hit(h) for h in found.hits]
        else:
            listing.fill(store, shown.of(store), sort, page)
    except TracehouseError as exc:  # a bad filter: say so on the page, as the CLI would
        listing.error = str(exc)
    return render_page("list.html.j2", listing=listing, providers=PROVIDERS, orders=ORDERS,
                       machines=filter_values(store, "host"), q=q, sort=sort, mode=mode,
                       modes=SEARCH_MODES, **asdict(shown))  # fmt: skip


class Listing:
    """One page of the session list: its rows with their cost, how many match, the paging."""

    def __init__(self, per: int = PAGE) -> None:
        self.per = per
        self.rows: list[dict[str, Any]] = []
        self.hits: list[dict[str, Any]] | None = None
        self.error: str | None = None
        self.total = 0
        self.page = 1
        self.pages = 1
        self.first = 0

    def fill(self, store: Any, filters: Any, sort: str, page: int) -> None:
        self.total = count_sessions(store, filters)
        self.pages = max(1, -(-self.total // self.per))
        self.page = min(page, self.pages)
        self.first = (self.page - 1) * self.per
        found = list_sessions(store, filters, self.per, self.first, order=sort)
        costs = _costs(store, [r["session_id"] for r in found])
        self.rows = [_row(r, costs.get(r["label"])) for r in found]


def _costs(store: Any, session_ids: list[str]) -> dict[str, Any]:
    """The listed sessions' cost at list prices, by label (None: no price for their models)."""
    if not session_ids:
        return {}
    report = usage(store, "session", SessionFilters(session_ids=tuple(session_ids)), list_prices())
    return {line.key: line.known_cost for line in report.lines if line.model is None}


def filter_values(store: Any, column: str) -> list[str]:
    """The values a filter may take (the machines sessions came from)."""
    rows = store.query(f"SELECT DISTINCT {column} AS v FROM sessions WHERE {column} IS NOT NULL")
    return sorted(str(r["v"]) for r in rows)


def _row(r: dict[str, Any], cost: float | None = None) -> dict[str, Any]:
    return {
        "href": _href(r["label"]),
        "label": r["label"],
        "title": _clipped(session_title(r)),
        "provider": r["source_provider"],
        "project": r["project"] or "",
        "model": r.get("model") or "",
        "host": r.get("host") or "",
        "when": _when(r["updated_at"] or r["created_at"]),
        "messages": r["message_count"] or 0,
        "tokens": f"{r['total_tokens']:,}" if r["total_tokens"] else "—",
        "cost": "—" if cost is None else f"${cost:,.2f}",
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


def session_page(label: str, request: Request, store: Ledger) -> HTMLResponse | RedirectResponse:
    if not signed_in(request, store):
        return RedirectResponse("/login", status_code=303)
    try:
        session_id = find_session(store, label)["session_id"]
    except TracehouseError as exc:
        return render_page("error.html.j2", 404, error=str(exc))
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
        renderer=request.app.state.renderer,
        result_href=lambda call_id: f"/s/{quote(label, safe='')}/results/{quote(call_id)}",
    )
    return HTMLResponse(pages.session(detail))


@router.get("/s/{label:path}/results/{call_id}")
def call_result(label: str, call_id: str, request: Request, store: Ledger) -> Response:
    """A long tool result, fetched when its fold is opened (or followed as a link)."""
    grant(request, store, "read")
    session_id = find_session(store, label)["session_id"]
    rows = store.query(
        "SELECT result, error FROM tool_calls WHERE session_id = ? AND tool_call_id = ?",
        [session_id, call_id],
    )
    if not rows:
        return render_page("error.html.j2", 404, error=f"{label} has no tool call {call_id}")
    text = rows[0]["result"] or rows[0]["error"] or ""
    return Response(text, media_type="text/plain; charset=utf-8")


@router.get("/s/{label:path}/version")
def session_version(label: str, request: Request, store: Ledger) -> Response:
    """What an open page polls: the session's fingerprint changes with its content."""
    grant(request, store, "read")
    row = find_session(store, label)
    body = {"fingerprint": row["fingerprint"], "updatedAt": row["updated_at"]}
    return Response(orjson.dumps(body), media_type="application/json")


# A label stored by an older release may hold a `/`, which the page's URL carries encoded and
# the router sees decoded: the session's page takes the rest of the path, so it is declared
# after the two routes below it.
router.get("/s/{label:path}", response_model=None)(session_page)
