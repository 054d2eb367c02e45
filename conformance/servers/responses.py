"""OpenAI's Responses API (`POST /v1/responses`, SSE), as Codex calls it through a
`model_providers` entry with `wire_api = "responses"`. A call of a freeform tool (`apply_patch`)
is a `custom_tool_call` with its `input`; any other a `function_call` with JSON `arguments`.
Usage: `input_tokens` hold the cached ones; `output_tokens` hold the reasoning; no cache writes.
"""

from __future__ import annotations

import json

from conformance.servers.base import Body, Dialect, Exchange, Reply, Request

FREEFORM = frozenset({"apply_patch"})


class Responses(Dialect):
    usage_writes = False

    def served(self, path: str) -> bool:
        return path.split("?")[0].endswith("/responses")

    def streamed(self, path: str, body: Body) -> bool:
        return body.get("stream", True) is not False

    def read(self, path: str, body: Body) -> Request:
        said: list[tuple[str, str]] = []
        results = []
        failed: list[bool | None] = []
        for item in body.get("input") or []:
            kind = item.get("type")
            if kind == "message":
                for part in item.get("content") or []:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        said.append((str(item.get("role")), part["text"]))
            elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
                said.append(("assistant", str(item.get("arguments") or item.get("input") or "")))
            elif kind in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                text = output if isinstance(output, str) else json.dumps(output)
                said.append(("tool", text))
                results.append(text)
                failed.append(None)  # no flag: the output says it (an exit code)
        tools = [str(t.get("name") or t.get("type")) for t in body.get("tools") or []]
        return Request(said, tools, results, str(body.get("model") or ""), failed)

    def write(self, exchange: Exchange, stream: bool) -> Reply:
        answer, usage = exchange.answer, exchange.usage
        assert answer is not None and usage is not None
        n = exchange.n
        items: list[Body] = []
        if usage.reasoning:
            items.append(
                {
                    "id": f"rs_{n:04d}",
                    "type": "reasoning",
                    "summary": [
                        {"type": "summary_text", "text": "Thinking about the scripted step."}
                    ],
                }
            )
        if answer.text:
            items.append(
                {
                    "id": f"msg_{n:04d}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
                }
            )
        for i, call in enumerate(answer.calls):
            call_id = f"call_{n:04d}_{i}"
            if call.tool in FREEFORM:
                items.append(
                    {
                        "id": f"ctc_{n:04d}_{i}",
                        "type": "custom_tool_call",
                        "status": "completed",
                        "call_id": call_id,
                        "name": call.tool,
                        "input": str(call.args.get("input", "")),
                    }
                )
            else:
                items.append(
                    {
                        "id": f"fc_{n:04d}_{i}",
                        "type": "function_call",
                        "status": "completed",
                        "call_id": call_id,
                        "name": call.tool,
                        "arguments": json.dumps(call.args),
                    }
                )
        exchange.response_id = f"resp_{n:04d}"
        prompt = usage.fresh + usage.cache_read
        output = usage.visible + usage.reasoning
        spent = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": usage.cache_read},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning},
            "total_tokens": prompt + output,
        }
        response = {
            "id": exchange.response_id,
            "object": "response",
            "model": exchange.body.get("model"),
            "status": "in_progress",
            "output": [],
        }
        events: list[Body] = [{"type": "response.created", "response": response}]
        for index, item in enumerate(items):
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": item}
            )
            events.append(
                {"type": "response.output_item.done", "output_index": index, "item": item}
            )
        events.append(
            {
                "type": "response.completed",
                "response": {**response, "status": "completed", "output": items, "usage": spent},
            }
        )
        return Reply(200, events=[(e["type"], e) for e in events])
