"""Anthropic's Messages API (`POST /v1/messages`, SSE or JSON), as Claude Code calls it at
`ANTHROPIC_BASE_URL`. Usage: `input_tokens` leave out the cache reads and writes, which have
fields of their own; thinking is part of `output_tokens` (no field apart, so no reasoning)."""

from __future__ import annotations

import json
from typing import Any

from conformance.servers.base import Body, Dialect, Exchange, Reply, Request


class Anthropic(Dialect):
    usage_reasons = False

    def served(self, path: str) -> bool:
        return path.split("?")[0].endswith("/v1/messages")

    def other(self, path: str, body: Body) -> Reply:
        if path.split("?")[0].endswith("/v1/messages/count_tokens"):
            return Reply(200, {"input_tokens": 100})
        return Reply(404, {"type": "error", "error": {"type": "not_found_error",
                                                      "message": path}})  # fmt: skip

    def read(self, path: str, body: Body) -> Request:
        said: list[tuple[str, str]] = []
        results = []
        failed: list[bool | None] = []
        for message in body.get("messages") or []:
            role = str(message.get("role"))
            content = message.get("content")
            if isinstance(content, str):
                said.append((role, content))
                continue
            for block in content if isinstance(content, list) else []:
                kind = block.get("type")
                if kind == "text":
                    said.append((role, str(block.get("text"))))
                elif kind == "tool_use":
                    said.append(("assistant", str(block.get("input"))))
                elif kind == "tool_result":
                    text = _result_text(block.get("content"))
                    said.append(("tool", text))
                    results.append(text)
                    failed.append(bool(block.get("is_error")))
        tools = [str(t.get("name")) for t in body.get("tools") or []]
        return Request(said, tools, results, str(body.get("model") or ""), failed)

    def write(self, exchange: Exchange, stream: bool) -> Reply:
        answer, usage = exchange.answer, exchange.usage
        assert answer is not None and usage is not None
        blocks: list[Body] = [{"type": "text", "text": answer.text}] if answer.text else []
        for i, call in enumerate(answer.calls):
            blocks.append({"type": "tool_use", "id": f"toolu_{exchange.n:04d}_{i}",
                           "name": call.tool, "input": call.args})  # fmt: skip
        exchange.response_id = f"msg_{exchange.n:04d}"
        spent = {"input_tokens": usage.fresh, "cache_read_input_tokens": usage.cache_read,
                 "cache_creation_input_tokens": usage.cache_write,
                 "output_tokens": usage.visible + usage.reasoning}  # fmt: skip
        message = {"id": exchange.response_id, "type": "message", "role": "assistant",
                   "model": exchange.body.get("model"), "content": blocks,
                   "stop_reason": "tool_use" if answer.calls else "end_turn",
                   "stop_sequence": None, "usage": spent}  # fmt: skip
        if not stream:
            return Reply(200, message)
        return Reply(200, events=[(e["type"], e) for e in _events(message)])


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


def _events(message: Body) -> list[Body]:
    """`message` as the Messages API streams it."""
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**message["usage"], "output_tokens": 1}}  # fmt: skip
    events: list[Body] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events += [
                {"type": "content_block_start", "index": index,
                 "content_block": {"type": "text", "text": ""}},
                {"type": "content_block_delta", "index": index,
                 "delta": {"type": "text_delta", "text": block["text"]}},
            ]  # fmt: skip
        else:
            events += [
                {"type": "content_block_start", "index": index,
                 "content_block": {**block, "input": {}}},
                {"type": "content_block_delta", "index": index,
                 "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
            ]  # fmt: skip
        events.append({"type": "content_block_stop", "index": index})
    ended = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append({"type": "message_delta", "delta": ended, "usage": message["usage"]})
    events.append({"type": "message_stop"})
    return events
