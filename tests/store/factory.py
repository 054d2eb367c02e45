"""Synthetic import requests in the JSON contract, for the store contract suite."""

from __future__ import annotations

from typing import Any

from tracehouse.model.codec import decode_request
from tracehouse.model.contract import ImportBatch

CONTENT = ("sessions", "turns", "messages", "tool_calls", "message_sources")
# Provenance columns that record when a store saw a row, not what the row says.
WHEN = {"first_imported_at", "last_imported_at", "host", "importer_version"}


def item(sid: str, n_messages: int = 3, *, text: str = "hello", **session: Any) -> dict[str, Any]:
    messages = []
    for i in range(n_messages):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append(
            {
                "sourceMessageId": f"m{i}",
                "seq": i,
                "role": role,
                "content": f"{text} {i}",
                "createdAt": f"2026-01-01T00:00:{i:02d}.000Z",
                "meta": {"n": i},
            }
        )
    return {
        "sourceProvider": "claude-code",
        "sourceSessionId": sid,
        "importedAtMs": 0,
        "session": {
            "title": f"session {sid}",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "messageCount": n_messages,
            **session,
        },
        "turns": [
            {
                "sourceTurnId": "t0",
                "seq": 0,
                "status": "completed",
                "inputTokens": 10,
                "outputTokens": 5,
                "totalTokens": 15,
                "queryMessageIds": ["m0"],
            }
        ],
        "messages": messages,
        "toolCalls": [
            {
                "sourceToolCallId": "c0",
                "seq": 0,
                "toolName": "Read",
                "params": {"path": "/x"},
                "status": "completed",
                "result": "ok",
            }
        ],
        "sources": [{"messageId": None, "sourceType": "url", "uri": f"https://e.x/{sid}"}],
    }


def fix_sources(raw: dict[str, Any]) -> dict[str, Any]:
    """Point each source at the item's first message (ids derive from provider + source ids)."""
    from tracehouse.model import ids

    first = ids.message_id(raw["sourceProvider"], raw.get("sourceSessionId", "?"), "m0")
    for source in raw.get("sources", []):
        source["messageId"] = first
    return raw


def request(items: list[dict[str, Any]], **envelope: Any) -> dict[str, Any]:
    return {
        "source": "test",
        "mode": "import",
        "items": [fix_sources(i) for i in items],
        **envelope,
    }


def batch(items: list[dict[str, Any]], **envelope: Any) -> ImportBatch:
    import orjson

    return decode_request(orjson.dumps(request(items, **envelope)))


def snapshot(store: Any, tables: tuple[str, ...] = CONTENT, drop: set[str] = frozenset()) -> dict:
    return {
        t: [{k: v for k, v in row.items() if k not in drop} for row in store.rows(t)]
        for t in tables
    }
