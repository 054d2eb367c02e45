"""What every scripted model has in common, whatever API it speaks: an HTTP server on 127.0.0.1
that keeps every request and every answer as the ground truth, asks the script what to say, and
answers with deterministic, distinct token usage in every field the API has.

A dialect (`anthropic.py`, `responses.py`, `chat.py`, `gemini.py`) reads its API's request into a
`Request` (what was said, which tools were offered, the tool results carried back) and writes an
`Answer` back in its API's shape, streamed or whole.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Body = dict[str, Any]


@dataclass(frozen=True)
class Call:
    """A tool call the model makes, in the agent's own tool name and arguments."""

    tool: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """What the model says: text, and the tool calls it makes after it (none ends the turn)."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    # what an agent that edits by text (Aider's edit blocks) does with the text: no API call,
    # but a call in the agent's own log
    edits: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Usage:
    """One response's tokens, split so that every API field gets its own number: input not
    read from or written to the cache, cache reads, cache writes, visible output, reasoning."""

    fresh: int
    cache_read: int
    cache_write: int
    visible: int
    reasoning: int

    @staticmethod
    def nth(n: int, *, writes: bool = True, reasons: bool = True) -> Usage:
        """The n-th response's usage: distinct for every n and every field, so a count that is
        dropped, doubled or put in the wrong column shows. An API without cache writes or
        reasoning gets none (`writes`, `reasons`)."""
        return Usage(
            fresh=1000 * n + 11,
            cache_read=100 * n + 3,
            cache_write=(10 * n + 5) if writes else 0,
            visible=20 * n + 7,
            reasoning=(3 * n + 1) if reasons else 0,
        )

    def ledger(self) -> dict[str, int]:
        """The same tokens in the ledger's convention (docs/schema.md): input holds the cache
        reads and writes, output holds the reasoning, total is input + output."""
        inp = self.fresh + self.cache_read + self.cache_write
        out = self.visible + self.reasoning
        return {"input_tokens": inp, "output_tokens": out, "cached_input_tokens": self.cache_read,
                "cache_write_tokens": self.cache_write, "reasoning_tokens": self.reasoning,
                "total_tokens": inp + out}  # fmt: skip


@dataclass
class Request:
    """A request as the script sees it, whatever the dialect."""

    said: list[tuple[str, str]]  # (role, text) of every message, in order
    tools: list[str]  # the tools offered: a conversation request offers some
    results: list[str]  # tool results carried back, in order
    model: str = ""
    # whether each result told the model its call failed; None where the API has no such flag
    failed: list[bool | None] = field(default_factory=list)
    body: Body = field(default_factory=dict)  # the request as it came, for what the rest lacks


@dataclass
class Exchange:
    """One request and what was answered: the ground truth of one model call."""

    n: int
    path: str
    body: Body
    request: Request | None
    answer: Answer | None
    usage: Usage | None
    response_id: str = ""

    @property
    def conversation(self) -> bool:
        """A call of the conversation itself: it offers tools. An agent's side calls (a title,
        a summary, a check of who speaks next) offer none and are not in its transcript."""
        return self.request is not None and bool(self.request.tools)


Script = Callable[[Request], Answer]


@dataclass
class Reply:
    status: int
    json_body: Body | None = None
    events: list[tuple[str | None, Body | str]] | None = None  # (SSE event name, data)


class Dialect:
    """One API's shape. `served(path)` says whether a path is a model call of this API."""

    usage_writes = True
    usage_reasons = True

    def served(self, path: str) -> bool:
        raise NotImplementedError

    def read(self, path: str, body: Body) -> Request:
        raise NotImplementedError

    def write(self, exchange: Exchange, stream: bool) -> Reply:
        raise NotImplementedError

    def streamed(self, path: str, body: Body) -> bool:
        return bool(body.get("stream"))

    def other(self, path: str, body: Body) -> Reply:
        """A request that is not a model call: 404, seen in the recorded exchanges."""
        return Reply(404, {"error": {"message": f"not served here: {path}"}})


@dataclass
class ScriptedModel:
    """A scripted model on 127.0.0.1 speaking one dialect; `exchanges` is the ground truth."""

    dialect: Dialect
    script: Script
    prefix: str = ""  # what the agent puts before the API's paths (`/v1`)
    exchanges: list[Exchange] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._n = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.prefix}"

    @contextmanager
    def running(self) -> Iterator[ScriptedModel]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()

    @property
    def requests(self) -> list[tuple[str, Body]]:
        """(path without its query, body) of every request, in the order they came."""
        return [(e.path.split("?")[0], e.body) for e in self.exchanges]

    def answer(self, path: str, body: Body) -> Reply:
        with self._lock:
            n = next(self._n)
            if not self.dialect.served(path):
                self.exchanges.append(Exchange(n, path, body, None, None, None))
                return self.dialect.other(path, body)
            request = self.dialect.read(path, body)
            request.body = body
            answer = self.script(request)
            usage = Usage.nth(n, writes=self.dialect.usage_writes,
                              reasons=self.dialect.usage_reasons)  # fmt: skip
            exchange = Exchange(n, path, body, request, answer, usage)
            self.exchanges.append(exchange)
        return self.dialect.write(exchange, self.dialect.streamed(path, body))


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(size) if size else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            path = self.path
            reply = model.answer(path, body if isinstance(body, dict) else {})
            if reply.events is None:
                data = json.dumps(reply.json_body).encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(reply.status)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in reply.events:
                head = f"event: {name}\n" if name else ""
                text = data if isinstance(data, str) else json.dumps(data)
                self.wfile.write(f"{head}data: {text}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

        do_GET = do_POST

        def log_message(self, format: str, *args: Any) -> None:  # the exchanges say it all
            pass

    return Handler
