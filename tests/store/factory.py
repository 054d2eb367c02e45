"""Synthetic import requests in the JSON contract, for the import contract suite of the stores."""

from __future__ import annotations

from typing import Any

from tracehouse.model.codec import decode_request
from tracehouse.model.contract import ImportBatch

CONTENT = ("sessions", "turns", "messages", "tool_calls", "message_sources")
# Provenance columns that record when a store saw a row, not what the row says.
WHEN = {"first_imported_at", "last_imported_at", "host", "importer_version", "source_read_at"}
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def item(sid: str, n_messages: int = 3, *, text: str = "hello", **session: Any) -> dict[str, Any]:
    """A session in the draft's shape: a turn, `n_messages` messages, a call and a cited source."""
    messages = []
    for i in range(n_messages):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append(
            {
                "sourceMessageId": f"m{i}",
                "sequence": i,
                "role": role,
                "content": f"{text} {i}",
                "createdAtMs": T0 + i * 1000,
                "meta": {"n": i},
            }
        )
    return {
        "sourceProvider": "claude-code",
        "sourceSessionId": sid,
        "importedAtMs": 0,
        "session": {
            "title": f"session {sid}",
            "createdAtMs": T0,
            "messageCount": n_messages,
            **session,
        },
        "turns": [
            {
                "sourceTurnId": "t0",
                "sequence": 0,
                "status": "completed",
                "inputTokens": 10,
                "outputTokens": 5,
                "totalTokens": 15,
                "queryMessageSourceIds": ["m0"],
            }
        ],
        "messages": messages,
        "toolCalls": [
            {
                "sourceToolCallId": "c0",
                "sequence": 0,
                "toolName": "Read",
                "paramsJson": {"path": "/x"},
                "status": "completed",
                "resultJson": "ok",
            }
        ],
        "sources": [{"sourceMessageId": "m0", "sourceType": "url", "uri": f"https://e.x/{sid}"}],
    }


def request(items: list[dict[str, Any]], **envelope: Any) -> dict[str, Any]:
    return {
        "source": "test",
        "mode": "import",
        "items": items,
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
