"""A scripted model that speaks Anthropic's Messages API on 127.0.0.1, for driving the real
Claude Code offline: every request it gets is kept for the test to read, and each answer comes
from the test's script (a text, or a tool call), streamed as the API streams it.

Only what Claude Code sends is served: `POST /v1/messages` (streamed or not) and
`POST /v1/messages/count_tokens`; anything else is a 404 the test will see in `requests`.
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
class Reply:
    """What the model answers: text, or a call of one tool (its stop reason follows)."""

    text: str = ""
    tool: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)

    def blocks(self, ids: Iterator[int]) -> list[Body]:
        if self.tool is None:
            return [{"type": "text", "text": self.text}]
        call = {"type": "tool_use", "id": f"toolu_{next(ids):04d}", "name": self.tool,
                "input": self.tool_input}  # fmt: skip
        return ([{"type": "text", "text": self.text}] if self.text else []) + [call]


Script = Callable[[Body], Reply]


def tool_results(body: Body) -> list[str]:
    """The text of every tool result the request carries back to the model."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    found.append("".join(b.get("text", "") for b in inner))
                else:
                    found.append(str(inner or ""))
    return found


def tool_names(body: Body) -> set[str]:
    return {str(t.get("name")) for t in body.get("tools", [])}


class ScriptedModel:
    def __init__(self, script: Script, model: str = "claude-sonnet-4-5") -> None:
        self.script = script
        self.model = model
        self.requests: list[tuple[str, Body]] = []  # (path, body) in the order they came
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @contextmanager
    def running(self) -> Iterator[ScriptedModel]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()

    def answer(self, path: str, body: Body) -> tuple[int, Body | None, list[Body] | None]:
        """(status, JSON body, or SSE events) for one request."""
        with self._lock:
            self.requests.append((path, body))
            if path.endswith("/v1/messages/count_tokens"):
                return 200, {"input_tokens": 100}, None
            if not path.endswith("/v1/messages"):
                return 404, {"type": "error", "error": {"type": "not_found_error",
                                                         "message": path}}, None  # fmt: skip
            reply = self.script(body)
            blocks = reply.blocks(self._ids)
            message_id = f"msg_{next(self._ids):04d}"
        stop = "tool_use" if reply.tool else "end_turn"
        usage = {"input_tokens": 120, "output_tokens": 12, "cache_read_input_tokens": 0,
                 "cache_creation_input_tokens": 0}  # fmt: skip
        message = {"id": message_id, "type": "message", "role": "assistant",
                   "model": body.get("model", self.model), "content": blocks,
                   "stop_reason": stop, "stop_sequence": None, "usage": usage}  # fmt: skip
        if not body.get("stream"):
            return 200, message, None
        return 200, None, list(_events(message))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                status, answer, events = model.answer(self.path.split("?")[0], body)
                if events is None:
                    data = json.dumps(answer).encode()
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(status)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for event in events:
                    line = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                    self.wfile.write(line.encode())
                self.wfile.flush()
                self.close_connection = True

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        return Handler


def _events(message: Body) -> Iterator[Body]:
    """The stream of `message` as the Messages API sends it."""
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**message["usage"], "output_tokens": 1}}  # fmt: skip
    yield {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield {"type": "content_block_start", "index": index,
                   "content_block": {"type": "text", "text": ""}}  # fmt: skip
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "text_delta", "text": block["text"]}}  # fmt: skip
        else:
            yield {"type": "content_block_start", "index": index,
                   "content_block": {**block, "input": {}}}  # fmt: skip
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "input_json_delta",
                             "partial_json": json.dumps(block["input"])}}  # fmt: skip
        yield {"type": "content_block_stop", "index": index}
    ended = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    spent = {"output_tokens": message["usage"]["output_tokens"]}
    yield {"type": "message_delta", "delta": ended, "usage": spent}
    yield {"type": "message_stop"}
