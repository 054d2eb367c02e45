"""What one Cursor bubble holds besides its text (`text.py`): when it was sent and answered,
its model, its thinking, an error notice, and the files, chunks, pages and docs it cites."""

from __future__ import annotations

from typing import Any

from tracehouse.model.fields import iso
from tracehouse.parsers.kit.untrusted import items, mapping

# Where a bubble's time comes from, first found wins: `createdAt` (ISO on `_v3` bubbles), then
# the absolute epoch-ms fields of `timingInfo` in the order the request lived them. C3 bubbles
# have no `createdAt`, and their `clientStartTime` is often a relative clock (iso() drops it).
TIMING_FIELDS = ("clientRpcSendTime", "clientStartTime", "clientSettleTime", "clientEndTime")


def times(bubble: dict[str, Any]) -> tuple[str | None, str | None]:
    """(when the bubble was sent or made, when its response ended), either possibly None."""
    timing = bubble.get("timingInfo")
    timing = timing if isinstance(timing, dict) else {}
    found = (iso(v) for v in (bubble.get("createdAt"), *(timing.get(f) for f in TIMING_FIELDS)))
    return next((t for t in found if t), None), iso(timing.get("clientEndTime"))


def prompt_times(bubbles: list[dict[str, Any]]) -> list[str | None]:
    """For each user bubble, the send time of the first timed answer before the next prompt
    (C3 prompts carry no time of their own; their answer's `clientRpcSendTime` is when they
    were sent). None elsewhere."""
    found: list[str | None] = [None] * len(bubbles)
    answer: str | None = None
    for index in range(len(bubbles) - 1, -1, -1):
        bubble = bubbles[index]
        if bubble.get("type") in (1, "user"):
            found[index], answer = answer, None
        else:
            answer = times(bubble)[0] or answer
    return found


def model(bubble: dict[str, Any]) -> str | None:
    info = bubble.get("modelInfo")
    if isinstance(info, dict) and info.get("modelName"):
        return str(info["modelName"])
    return str(bubble["modelType"]) if bubble.get("modelType") else None


def thinking(bubble: dict[str, Any]) -> str | None:
    thinking = bubble.get("thinking")
    if isinstance(thinking, dict) and thinking.get("text"):
        return str(thinking["text"])
    blocks = bubble.get("allThinkingBlocks")
    if isinstance(blocks, list):
        texts = [str(b.get("text")) for b in blocks if isinstance(b, dict) and b.get("text")]
        return "\n\n".join(texts) or None
    return None


def error(bubble: dict[str, Any]) -> str | None:
    details = bubble.get("errorDetails")
    if not isinstance(details, dict):
        return None
    error = details.get("error")
    inner = error.get("details") if isinstance(error, dict) else None
    if isinstance(inner, dict):
        parts = [inner.get("title"), inner.get("detail")]
        return ": ".join(str(p) for p in parts if p) or "error"
    return str(details.get("message") or error or "error")


def references(bubble: dict[str, Any]) -> list[tuple[str, str, str | None, str | None]]:
    found: list[tuple[str, str, str | None, str | None]] = []
    for entry in items(bubble.get("relevantFiles")):
        path = (
            entry
            if isinstance(entry, str)
            else mapping(entry).get("uri") or mapping(entry).get("path")
        )
        if isinstance(path, str) and path:
            found.append(("file", path, None, None))
    for key in ("attachedCodeChunks", "attachedFileCodeChunksUris"):
        for chunk in items(bubble.get(key)):
            if isinstance(chunk, dict):
                uri = chunk.get("relativeWorkspacePath") or chunk.get("uri") or chunk.get("path")
                uri = uri.get("path") if isinstance(uri, dict) else uri
                preview = chunk.get("contents") or chunk.get("content")
                if isinstance(uri, str) and uri:
                    found.append(("file", uri, None, preview if isinstance(preview, str) else None))
            elif isinstance(chunk, str):
                found.append(("file", chunk, None, None))
    for key, kind in (("webReferences", "url"), ("docsReferences", "doc")):
        for ref in items(bubble.get(key)):
            if isinstance(ref, dict):
                uri = ref.get("url") or ref.get("uri") or ref.get("name")
                if isinstance(uri, str) and uri:
                    title = ref.get("title") or ref.get("name")
                    found.append((kind, uri, str(title) if title else None, None))
    return list(dict.fromkeys(found))
