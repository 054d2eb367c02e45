"""Sessions brought back from a prompt log (Codex `history.jsonl`, Gemini CLI `logs.json`):
the prompts of a session whose own file is gone, each a user message in a turn of its own.

The session and its rows are flagged `metadata.recovered_from`; the store never lets such a
session replace one imported from its own file. A prompt log holds prompts only, so tokens are
unknown (NULL), not 0, on the turns as on the session, whose totals still equal their sums.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracehouse.model import ids
from tracehouse.model.contract import ImportItem
from tracehouse.model.fields import cap
from tracehouse.model.fingerprint import combine
from tracehouse.model.rows import TableBuffer, row_fingerprint
from tracehouse.model.tables import SESSIONS


@dataclass(frozen=True)
class Prompt:
    key: str  # its source id within the session
    at: str | None
    text: str
    meta: dict[str, Any]  # attribution: how the log knows it was typed


def add_prompts(
    tables: dict[str, TableBuffer],
    provider: str,
    source_id: str,
    prompts: list[Prompt],
    recovered_from: str,
    source_ref: str,
    max_field: int,
) -> None:
    """The prompts' messages and turns into `tables` ("messages", "turns"), each turn following
    the one before."""
    session_id = ids.session_id(provider, source_id)
    previous: str | None = None
    for seq, prompt in enumerate(prompts):
        message_id = ids.message_id(provider, source_id, prompt.key)
        turn_id = ids.turn_id(provider, source_id, prompt.key)
        tables["messages"].add(
            {
                "message_id": message_id,
                "session_id": session_id,
                "turn_id": turn_id,
                "source_message_id": prompt.key,
                "seq": seq,
                "role": "user",
                "message_type": "user",
                "content": cap(prompt.text, max_field),
                "created_at": prompt.at,
                "meta": prompt.meta,
                "metadata": {"recovered_from": recovered_from},
                "source_ref": source_ref,
            }
        )
        tables["turns"].add(
            {
                "turn_id": turn_id,
                "session_id": session_id,
                "source_turn_id": prompt.key,
                "parent_turn_id": previous,
                "seq": seq,
                "started_at": prompt.at,
                "completed_at": prompt.at,
                "status": "completed",
                "query_message_ids": [message_id],
                "metadata": {"recovered_from": recovered_from},
            }
        )
        previous = turn_id


def recovered_item(
    provider: str, source_id: str, session: dict[str, Any], prompts: int, now_ms: int
) -> ImportItem:
    """The session row (its own fields given) completed with its counts, as an item."""
    session = {
        "session_id": ids.session_id(provider, source_id),
        "source_provider": provider,
        "source_session_id": source_id,
        **session,
        "turn_count": prompts,
        "message_count": prompts,
        "tool_call_count": 0,
    }
    fingerprint = combine([row_fingerprint(SESSIONS, session)])
    session["fingerprint"] = fingerprint
    return ImportItem(provider, source_id, fingerprint, now_ms, session, ())
