"""What a Gemini CLI message's parts say (Gemini's `PartListUnion`): its text, its thinking, the
calls its `functionCall` parts make and what their `functionResponse` parts answer."""

from __future__ import annotations

from typing import Any

import orjson


def content_text(content: Any) -> str:
    """A PartListUnion's text: a string, a part (`{text}`), or a list of them. Parts without
    text (inline data, function calls) are left to the tool calls that hold them; thought parts
    are the message's thinking."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        text = content.get("text")
        return text if isinstance(text, str) and not content.get("thought") else ""
    if isinstance(content, list):
        return "".join(content_text(part) for part in content)
    return str(content)


def thoughts(given: Any) -> str | None:
    """A reply's `thoughts[]`, each `subject: description`."""
    parts = [": ".join(str(p) for p in (t.get("subject"), t.get("description")) if p)
             for t in given if isinstance(t, dict)] if isinstance(given, list) else []  # fmt: skip
    return "\n\n".join(p for p in parts if p) or None


def thought_parts(content: Any) -> str | None:
    """A reply's `thought: true` parts (a resume snapshot's copy has no `thoughts`)."""
    parts = [p["text"] for p in content if isinstance(p, dict) and p.get("thought")
             and isinstance(p.get("text"), str)] if isinstance(content, list) else []  # fmt: skip
    return "\n\n".join(parts) or None


def answers_only(content: Any) -> bool:
    """Parts that are all `functionResponse`: what the CLI sends back after a tool ran."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
                for p in content)
    )  # fmt: skip


def function_calls(content: Any, at: str | None) -> list[dict[str, Any]]:
    """A reply's `functionCall` parts as `toolCalls` entries, without result or status yet (a
    resume snapshot writes replies this way)."""
    calls = []
    for index, part in enumerate(content if isinstance(content, list) else []):
        call = part.get("functionCall") if isinstance(part, dict) else None
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            calls.append({"id": str(call.get("id") or f"{call['name']}-{index}"),
                          "name": call["name"], "args": call.get("args"),
                          "timestamp": at})  # fmt: skip
    return calls


def function_response(result: Any) -> tuple[Any, Any]:
    """(output, error) of a tool call's `result`, its list of Gemini `functionResponse` parts."""
    outputs, errors = [], []
    for part in result if isinstance(result, list) else [result]:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        body = response.get("response") if isinstance(response, dict) else None
        if isinstance(body, dict):
            if body.get("output") is not None:
                outputs.append(body["output"])
            if body.get("error") is not None:
                errors.append(body["error"])
            if body.get("output") is None and body.get("error") is None:
                outputs.append(body)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            outputs.append(part["text"])
    return _joined(outputs), _joined(errors)


def _joined(values: list[Any]) -> Any:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return "\n".join(v if isinstance(v, str) else orjson.dumps(v).decode() for v in values)
