"""Where `browse` reads: a ledger on this machine (SQLite or PostgreSQL) through the library, or
a gateway (`tracehouse serve`) through its read API with a read token. Both answer in the same
records, so the app never asks which it has.

A gateway's answers are data like any other: shown as text, never run. Where a command is
offered for a session (resume), it is built here from the session's fields by the same code as
for a local one (`resume.plan.hint`), never taken from what the gateway sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, unquote, urlencode, urlsplit, urlunsplit

from tracehouse.errors import StoreError
from tracehouse.reports.filters import ORDERS as LIST_ORDERS
from tracehouse.search.hits import MARK

LISTED = 200  # sessions in the list; a search finds the others
HITS = 50


ORDERS = tuple(LIST_ORDERS)  # what `s` cycles through: updated, created, tokens, messages


@dataclass(frozen=True)
class Listing:
    """Which sessions the list shows, and in which order (`browse`'s options, `s`)."""

    providers: tuple[str, ...] = ()
    project: str | None = None
    since: str | None = None  # as typed: `2h`, a local date or time
    until: str | None = None
    order: str = "updated"


@dataclass(frozen=True)
class Listed:
    """A session as the list shows it."""

    label: str
    session_id: str
    provider: str
    project: str | None = None
    updated_at: str | None = None
    tokens: int = 0
    title: str | None = None
    is_subagent: bool = False
    host: str | None = None  # the machine it was read on or pushed from

    @classmethod
    def of_row(cls, row: dict[str, Any]) -> Listed:
        return cls(
            str(row["label"]), str(row["session_id"]), str(row["source_provider"]),
            _text(row.get("project")), _text(row.get("updated_at")),
            _count(row.get("total_tokens")), _text(row.get("title") or row.get("task_description")),
            bool(row.get("is_subagent")), _text(row.get("host")),
        )  # fmt: skip

    @classmethod
    def of_summary(cls, s: dict[str, Any]) -> Listed:
        """From the gateway's `SessionSummary` (camelCase)."""
        _strings(s, "label", "sessionId", "sourceProvider")
        return cls.of_row(row_of_summary(s))


@dataclass(frozen=True)
class Found:
    """A search hit: the session it is in, and the message or call it opens at."""

    label: str
    session_id: str
    kind: str
    created_at: str | None
    snippet: str  # without the marks around the query's words
    at: str | None


@dataclass(frozen=True)
class Opened:
    """A session's transcript with the sessions above and below it."""

    session: Listed
    text: str
    parent: Listed | None
    children: list[Listed]
    row: dict[str, Any] = field(repr=False)  # its fields, for the resume command


class Reader(Protocol):
    shown: str  # where it reads, for the title bar
    local: bool  # a ledger of this machine's (what `tracehouse resume` and `open` read)

    def sessions(self, listing: Listing) -> list[Listed]: ...
    def costs(self, listing: Listing, shown: list[Listed]) -> dict[str, float | None]: ...
    def prepare(self) -> None: ...
    def search(self, query: str) -> list[Found]: ...
    def open(self, ref: str, *, at: str | None = None, thinking: bool = False) -> Opened: ...
    def markdown(self, ref: str) -> str: ...
    def close(self) -> None: ...


class LedgerReader:
    """A ledger on this machine, read through the library as the other commands read it."""

    local = True

    def __init__(
        self,
        store: Any,
        shown: str,
        embeddings: Any = None,
        redactor: Callable[[], Any] = lambda: None,
    ) -> None:
        self.store = store
        self.shown = shown
        self.embeddings = embeddings
        # An export redacts what the ledger holds verbatim, as `tracehouse export` does; the
        # redactor is loaded only then (its detectors take a while).
        self.redactor = redactor
        self.prices: Any = None  # read when the costs are first shown

    def sessions(self, listing: Listing) -> list[Listed]:
        from tracehouse.reports.filters import list_sessions

        found = list_sessions(self.store, _filters(listing), limit=LISTED, order=listing.order)
        return [Listed.of_row(r) for r in found]

    def prepare(self) -> None:
        """What the costs need and the first screen does not: the price table, read in a thread
        of its own while the list is drawn (it touches no database)."""
        from tracehouse.reports import usage  # noqa: F401
        from tracehouse.reports.pricing import load_prices, own_prices_file

        if self.prices is None:
            self.prices = load_prices(own_prices_file())

    def costs(self, listing: Listing, shown: list[Listed]) -> dict[str, float | None]:
        """What each of `shown` cost, by label, at the price table's prices (with your own)."""
        from dataclasses import replace

        from tracehouse.reports.usage import usage

        self.prepare()
        only = replace(_filters(listing), session_ids=tuple(s.session_id for s in shown))
        return _by_label(usage(self.store, "session", only, self.prices).to_json()["rows"])

    def search(self, query: str) -> list[Found]:
        from tracehouse.reports import searching
        from tracehouse.search.hits import SearchFilters

        found = searching.search(
            self.store, query, SearchFilters(limit=HITS), embeddings=self.embeddings
        )
        return [_found(h.to_json()) for h in found.hits]

    def open(self, ref: str, *, at: str | None = None, thinking: bool = False) -> Opened:
        from tracehouse.exports.reading import reading

        read = reading(self.store, ref, at=at, thinking=thinking)
        return Opened(
            Listed.of_row(read.session), read.text,
            None if read.parent is None else Listed.of_row(read.parent),
            [Listed.of_row(c) for c in read.children], read.session,
        )  # fmt: skip

    def markdown(self, ref: str) -> str:
        from tracehouse.exports.reading import reading

        return reading(self.store, ref, format="markdown", redactor=self.redactor()).text

    def close(self) -> None:
        self.store.close()


class GatewayReader:
    """A gateway's ledger through `/v1` with a read token (a push or admin token reads too)."""

    local = False

    def __init__(self, address: str) -> None:
        """`address`: the gateway's URL with the token in its user info
        (`store.remote.store.gateway_address`)."""
        from tracehouse.retrying import RetryLog
        from tracehouse.store.location import without_token
        from tracehouse.store.remote.http import Gateway

        parts = urlsplit(address)
        base = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2], query=""))
        self.shown = without_token(address)
        self.gateway = Gateway(base, unquote(parts.password or ""), "", self.shown, RetryLog())
        self.gateway.client.headers.pop("X-Tracehouse-Machine")  # a reader pushes nothing
        self.gateway.call("GET", "/v1/whoami")  # a token the gateway refuses: said at start

    def sessions(self, listing: Listing) -> list[Listed]:
        asked = [*_asked(listing), ("limit", str(LISTED)), ("order", listing.order)]
        with self._answer("/v1/sessions") as answer:
            found = answer("/v1/sessions?" + urlencode(asked))
            return [Listed.of_summary(s) for s in found["sessions"]]

    def prepare(self) -> None:
        pass  # the gateway prices what it sends

    def costs(self, listing: Listing, shown: list[Listed]) -> dict[str, float | None]:
        asked = [*_asked(listing), ("period", "session")]
        with self._answer("/v1/usage") as answer:
            return _by_label(answer("/v1/usage?" + urlencode(asked))["rows"])

    def search(self, query: str) -> list[Found]:
        with self._answer("/v1/search") as answer:
            found = answer("/v1/search?" + urlencode({"q": query, "limit": HITS}))
            return [_found(h) for h in found["hits"]]

    def open(self, ref: str, *, at: str | None = None, thinking: bool = False) -> Opened:
        asked = {"thinking": "true" if thinking else "false", **({"at": at} if at else {})}
        with self._answer("/v1/sessions/…/transcript") as answer:
            read = answer(_transcript(ref, asked))
            parent = read["parent"]
            return Opened(
                Listed.of_summary(read), str(read["text"]),
                None if parent is None else Listed.of_summary(parent),
                [Listed.of_summary(c) for c in read["children"]], row_of_summary(read),
            )  # fmt: skip

    def markdown(self, ref: str) -> str:
        with self._answer("/v1/sessions/…/transcript") as answer:
            return str(answer(_transcript(ref, {"format": "markdown"}))["text"])

    @contextmanager
    def _answer(self, route: str) -> Iterator[Any]:
        """`answer(path)`: the gateway's JSON; one it should not have sent (another shape) is
        a clear error naming the route, not a traceback."""
        try:
            yield lambda path: self.gateway.call("GET", path)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise StoreError(f"{self.shown}{route}: an answer of another shape ({exc})") from None

    def close(self) -> None:
        self.gateway.close()


def _filters(listing: Listing) -> Any:
    from tracehouse.reports.filters import build_session_filters

    return build_session_filters(providers=listing.providers, project=listing.project,
                                 since=listing.since, until=listing.until)  # fmt: skip


def _asked(listing: Listing) -> list[tuple[str, str]]:
    """`listing` as a gateway's query parameters."""
    asked = [("provider", p) for p in listing.providers]
    asked += [(k, v) for k, v in (("project", listing.project), ("since", listing.since),
                                  ("until", listing.until)) if v]  # fmt: skip
    return asked


def _by_label(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """A `usage session` report's rows as label → cost (None: no price known)."""
    costs: dict[str, float | None] = {}
    for row in rows:
        cost, label = row.get("cost"), row.get("key")
        if isinstance(label, str):
            known = costs.get(label)
            if isinstance(cost, int | float) and not isinstance(cost, bool):
                costs[label] = (known or 0.0) + float(cost)
            else:
                costs.setdefault(label, None)
    return costs


_ROW_OF_SUMMARY = {
    "label": "label", "sessionId": "session_id", "sourceProvider": "source_provider",
    "sourceSessionId": "source_session_id", "title": "title", "project": "project",
    "workspacePath": "workspace_path", "updatedAt": "updated_at", "isSubagent": "is_subagent",
    "taskDescription": "task_description", "totalTokens": "total_tokens",
    "sourceMissingAt": "source_missing_at", "host": "host",
}  # fmt: skip


def row_of_summary(s: dict[str, Any]) -> dict[str, Any]:
    """A gateway's session summary as the ledger's row fields, those a reader uses (the
    resume command's among them; a session's file path is never sent, so a session of another
    machine is never taken for one of this machine's)."""
    return {column: s.get(key) for key, column in _ROW_OF_SUMMARY.items()}


def _transcript(ref: str, asked: dict[str, str]) -> str:
    return f"/v1/sessions/{quote(ref, safe='')}/transcript?{urlencode(asked)}"


def _strings(answer: dict[str, Any], *keys: str) -> None:
    for key in keys:
        if not isinstance(answer.get(key), str):
            raise TypeError(f"{key}: {answer.get(key)!r}")


def _found(hit: dict[str, Any]) -> Found:
    _strings(hit, "label", "session_id")
    kind = str(hit.get("kind"))
    at = hit.get("message_id") or (hit.get("id") if kind == "tool" else None)
    snippet = str(hit.get("snippet") or "").replace(MARK[0], "").replace(MARK[1], "")
    return Found(
        str(hit["label"]), str(hit["session_id"]), kind, _text(hit.get("created_at")), snippet,
        None if at is None else str(at),
    )  # fmt: skip


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
