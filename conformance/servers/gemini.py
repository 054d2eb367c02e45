"""Gemini's `generateContent` and `streamGenerateContent` (SSE), as Gemini CLI calls them at
`GOOGLE_GEMINI_BASE_URL`: `/v1beta/models/{model}:{method}`. Usage: `promptTokenCount` holds the
cached tokens, `thoughtsTokenCount` is apart from `candidatesTokenCount`; Gemini has no cache
writes."""

from __future__ import annotations

import json
import re

from conformance.servers.base import Body, Dialect, Exchange, Reply, Request

_PATH = re.compile(r"/models/(?P<model>[^:/?]+):(?P<method>\w+)")
# What Gemini CLI asks with a JSON schema and no tools: who speaks next, whether it loops.
_JSON_ANSWER = {"next_speaker": "user", "reasoning": "The scripted turn is over.",
                "confidence": 0.0}  # fmt: skip


class Gemini(Dialect):
    usage_writes = False

    def served(self, path: str) -> bool:
        found = _PATH.search(path)
        return bool(found and found["method"] in ("generateContent", "streamGenerateContent"))

    def streamed(self, path: str, body: Body) -> bool:
        found = _PATH.search(path)
        return bool(found and found["method"] == "streamGenerateContent")

    def other(self, path: str, body: Body) -> Reply:
        found = _PATH.search(path)
        if found and found["method"] == "countTokens":
            return Reply(200, {"totalTokens": 100})
        return super().other(path, body)

    def read(self, path: str, body: Body) -> Request:
        said: list[tuple[str, str]] = []
        results = []
        failed: list[bool | None] = []
        for content in body.get("contents") or []:
            role = "assistant" if content.get("role") == "model" else "user"
            for part in content.get("parts") or []:
                if "text" in part and not part.get("thought"):
                    said.append((role, str(part["text"])))
                elif "functionCall" in part:
                    said.append(("assistant", json.dumps(part["functionCall"].get("args"))))
                elif "functionResponse" in part:
                    response = part["functionResponse"].get("response")
                    output = response.get("output") if isinstance(response, dict) else None
                    text = output if isinstance(output, str) else json.dumps(response)
                    said.append(("tool", text))
                    results.append(text)
                    failed.append(isinstance(response, dict) and "error" in response)
        tools = [str(d.get("name")) for t in body.get("tools") or []
                 for d in t.get("functionDeclarations") or []]  # fmt: skip
        found = _PATH.search(path)
        return Request(said, tools, results, found["model"] if found else "", failed)

    def write(self, exchange: Exchange, stream: bool) -> Reply:
        answer, usage, request = exchange.answer, exchange.usage, exchange.request
        assert answer is not None and usage is not None and request is not None
        config = exchange.body.get("generationConfig") or {}
        parts: list[Body] = []
        if usage.reasoning:
            parts.append({"text": "Thinking about the scripted step.", "thought": True})
        if not request.tools and config.get("responseMimeType") == "application/json":
            parts.append({"text": json.dumps(_JSON_ANSWER)})
        elif answer.text:
            parts.append({"text": answer.text})
        for i, call in enumerate(answer.calls):
            parts.append({"functionCall": {"id": f"call_{exchange.n:04d}_{i}", "name": call.tool,
                                           "args": call.args}})  # fmt: skip
        prompt = usage.fresh + usage.cache_read
        metadata = {"promptTokenCount": prompt, "cachedContentTokenCount": usage.cache_read,
                    "candidatesTokenCount": usage.visible, "thoughtsTokenCount": usage.reasoning,
                    "totalTokenCount": prompt + usage.visible + usage.reasoning}  # fmt: skip
        exchange.response_id = f"resp-{exchange.n:04d}"
        whole = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": metadata,
            "modelVersion": request.model,
            "responseId": exchange.response_id,
        }  # fmt: skip
        if not stream:
            return Reply(200, whole)
        return Reply(200, events=[(None, whole)])
