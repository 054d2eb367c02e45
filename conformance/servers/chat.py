"""OpenAI's Chat Completions (`POST /v1/chat/completions`, SSE), as OpenCode calls an
`@ai-sdk/openai-compatible` provider. Usage comes in the last chunk: `prompt_tokens` hold the
cached ones (`prompt_tokens_details.cached_tokens`), `completion_tokens` hold the reasoning
(`completion_tokens_details.reasoning_tokens`); no cache writes."""

from __future__ import annotations

import json

from conformance.servers.base import Body, Dialect, Exchange, Reply, Request


class Chat(Dialect):
    usage_writes = False

    def served(self, path: str) -> bool:
        return path.split("?")[0].endswith("/chat/completions")

    def read(self, path: str, body: Body) -> Request:
        said: list[tuple[str, str]] = []
        results = []
        failed: list[bool | None] = []
        for message in body.get("messages") or []:
            role = str(message.get("role"))
            content = message.get("content")
            text = (
                content
                if isinstance(content, str)
                else "".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))
            )
            if role == "tool":
                said.append(("tool", text))
                results.append(text)
                failed.append(None)  # no flag: the output says it (an exit code)
                continue
            if text:
                said.append((role, text))
            for call in message.get("tool_calls") or []:
                said.append(("assistant", str(call.get("function", {}).get("arguments"))))
        tools = [str(t.get("function", {}).get("name")) for t in body.get("tools") or []]
        return Request(said, tools, results, str(body.get("model") or ""), failed)

    def write(self, exchange: Exchange, stream: bool) -> Reply:
        answer, usage = exchange.answer, exchange.usage
        assert answer is not None and usage is not None
        n = exchange.n
        exchange.response_id = f"chatcmpl-{n:04d}"
        model = exchange.body.get("model")
        prompt = usage.fresh + usage.cache_read
        output = usage.visible + usage.reasoning
        spent = {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read},
            "completion_tokens_details": {"reasoning_tokens": usage.reasoning},
        }
        calls = [
            {
                "index": i,
                "id": f"call_{n:04d}_{i}",
                "type": "function",
                "function": {"name": c.tool, "arguments": json.dumps(c.args)},
            }
            for i, c in enumerate(answer.calls)
        ]
        finish = "tool_calls" if calls else "stop"

        def chunk(delta: Body, finish_reason: str | None = None) -> Body:
            return {
                "id": exchange.response_id,
                "object": "chat.completion.chunk",
                "created": 1_800_000_000 + n,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        if not stream:
            message: Body = {"role": "assistant", "content": answer.text or None}
            if calls:
                message["tool_calls"] = [
                    {k: v for k, v in c.items() if k != "index"} for c in calls
                ]
            return Reply(
                200,
                {
                    "id": exchange.response_id,
                    "object": "chat.completion",
                    "created": 1_800_000_000 + n,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": spent,
                },
            )
        events: list[Body] = [chunk({"role": "assistant", "content": ""})]
        if usage.reasoning:
            events.append(chunk({"reasoning_content": "Thinking about the scripted step."}))
        if answer.text:
            events.append(chunk({"content": answer.text}))
        if calls:
            events.append(chunk({"tool_calls": calls}))
        events.append(chunk({}, finish))
        events.append({**chunk({}), "choices": [], "usage": spent})
        return Reply(200, events=[*((None, e) for e in events), (None, "[DONE]")])
