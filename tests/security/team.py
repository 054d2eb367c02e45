"""A team ledger behind a real gateway app, on SQLite and PostgreSQL: alice and bob push with
tokens of their own, as DESIGN §10 has it, and bob tries what a hostile teammate would."""

from __future__ import annotations

import json
from typing import Any

MACHINES = ("alice", "bob")
UUID_A = "019a0000-0000-7000-8000-00000c0ffee4"


def session_item(provider: str, source_id: str, *, text: str = "hello",
                 **session: Any) -> dict[str, Any]:  # fmt: skip
    """One `sessions.import` item: a prompt and an answer."""
    at = session.pop("createdAtMs", 1767225600000)
    return {
        "sourceProvider": provider,
        "sourceSessionId": source_id,
        "session": {
            "createdAtMs": at,
            "updatedAtMs": at + 60_000,
            "workspacePath": "/home/dev/shop",
            **session,
        },
        "turns": [],
        "messages": [
            {
                "sourceMessageId": "m1",
                "role": "user",
                "content": text,
                "sequence": 0,
                "createdAtMs": at,
            },
            {
                "sourceMessageId": "m2",
                "role": "assistant",
                "content": "done",
                "sequence": 1,
                "createdAtMs": at + 1000,
            },
        ],
        "toolCalls": [],
    }


def push(team: Any, who: str, *items: dict[str, Any]) -> list[dict[str, Any]]:
    request = {"source": "test", "runId": f"run-{who}-{id(items)}", "mode": "backfill",
               "items": list(items)}  # fmt: skip
    answer = team.post(
        "/v1/sessions.import", content=json.dumps(request),
        headers={"Authorization": f"Bearer {team.tokens[who]}",
                 "Content-Type": "application/json"},
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    return list(answer.json()["results"])


def read(team: Any, path: str) -> Any:
    return team.get(path, headers={"Authorization": f"Bearer {team.tokens['viewer']}"})
