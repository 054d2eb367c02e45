"""A scripted model that speaks OpenAI's Responses API on 127.0.0.1, for driving the real Codex
CLI offline: every request is kept for the test to read, and each answer is the script's text,
streamed as the API streams it (`POST /v1/responses`). Anything else is a 404 the test sees."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Body = dict[str, Any]


def said(body: Body) -> list[tuple[str, str]]:
    """(role, text) of every message the request carries, in order; a function call as its
    arguments, under the role `assistant`."""
    out = []
    for item in body.get("input", []):
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    out.append((item.get("role", ""), part["text"]))
        elif item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            out.append(("assistant", str(item.get("arguments") or item.get("input") or "")))
    return out


class ScriptedModel:
    def __init__(self, script: Callable[[Body], str], model: str = "gpt-5.3-codex") -> None:
        self.script = script
        self.model = model
        self.requests: list[tuple[str, Body]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @contextmanager
    def running(self) -> Iterator[ScriptedModel]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()

    def events(self, path: str, body: Body) -> list[Body] | None:
        with self._lock:
            self.requests.append((path, body))
            if not path.endswith("/responses"):
                return None
            text = self.script(body)
            n = next(self._ids)
        item = {"id": f"msg_{n:04d}", "type": "message", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip
        usage = {"input_tokens": 200, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 210}  # fmt: skip
        response = {"id": f"resp_{n:04d}", "object": "response", "model": body.get("model",
                    self.model), "status": "in_progress", "output": []}  # fmt: skip
        return [
            {"type": "response.created", "response": response},
            {"type": "response.output_item.added", "output_index": 0,
             "item": {**item, "status": "in_progress", "content": []}},
            {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
             "content_index": 0, "delta": text},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed",
             "response": {**response, "status": "completed", "output": [item], "usage": usage}},
        ]  # fmt: skip

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                events = model.events(self.path.split("?")[0], body)
                if events is None:
                    data = b'{"error": {"message": "not served here"}}'
                    self.send_response(404)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for event in events:
                    self.wfile.write(
                        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                    )
                self.wfile.flush()
                self.close_connection = True

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
