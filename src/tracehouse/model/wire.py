"""The rows of a `sessions.import` item, field by field: the draft's names and tracehouse's
extensions, and how each maps to a ledger column (DESIGN §4).

One declaration read both ways: `codec` and `row_codec` decode requests with it, `item_json`
encodes stored sessions with it, and `docs/sessions-import.schema.json` is checked against it.
Times travel as epoch milliseconds and are kept as ISO-8601 text; links travel as source ids
within the item's provider and are kept as the ids derived from them (`model/ids.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

Form = Literal["value", "time", "own", "link", "links", "result"]
Target = Literal["turn", "message"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The latest time a producer may send, 9999-12-31T23:59:59.999Z: what ISO-8601 can spell.
MAX_MS = 253_402_300_799_999


@dataclass(frozen=True)
class Field:
    """One field of a row: `name` on the wire, `column` in the ledger.

    Forms: `value` as the column's kind; `time` epoch ms ↔ ISO text; `own` the row's own source
    id (its ledger id derives from it); `link` a source id of a row of the same session, kept as
    that row's id; `links` a list of them, kept as a JSON list; `result` any JSON, kept as text.
    """

    name: str
    column: str
    form: Form = "value"
    target: Target | None = None
    draft: bool = True  # in the draft, or one of tracehouse's documented extensions


def _ext(name: str, column: str, form: Form = "value", target: Target | None = None) -> Field:
    return Field(name, column, form, target, draft=False)


_TOKENS = (
    Field("inputTokens", "input_tokens"),
    Field("outputTokens", "output_tokens"),
    Field("cachedInputTokens", "cached_input_tokens"),
    Field("cacheWriteTokens", "cache_write_tokens"),
    Field("reasoningTokens", "reasoning_tokens"),
    Field("totalTokens", "total_tokens"),
)

# The session's links to its parent are kept as given (`*_source_*` columns); `row_codec`
# derives the ledger ids beside them, the message and call ones within the parent session.
SESSION = (
    Field("labelHint", "label"),
    Field("createdAtMs", "created_at", "time"),
    Field("updatedAtMs", "updated_at", "time"),
    Field("model", "model"),
    Field("provider", "llm_provider"),
    Field("workspacePath", "workspace_path"),
    Field("project", "project"),
    Field("isSubagent", "is_subagent"),
    Field("parentSourceSessionId", "parent_source_session_id"),
    Field("parentSourceMessageId", "parent_source_message_id"),
    Field("spawnToolCallId", "spawn_source_tool_call_id"),
    Field("taskDescription", "task_description"),
    Field("taskStatus", "task_status"),
    Field("metadata", "metadata"),
    _ext("title", "title"),
    _ext("gitBranch", "git_branch"),
    _ext("gitCommit", "git_commit"),
    _ext("gitRemote", "git_remote"),
    _ext("toolVersion", "tool_version"),
    _ext("entrypoint", "entrypoint"),
    *(_ext(f.name, f.column) for f in _TOKENS),
    _ext("turnCount", "turn_count"),
    _ext("messageCount", "message_count"),
    _ext("toolCallCount", "tool_call_count"),
    _ext("sourcePath", "source_path"),
)

TURN = (
    Field("sourceTurnId", "source_turn_id", "own"),
    Field("parentSourceTurnId", "parent_turn_id", "link", "turn"),
    Field("startedAtMs", "started_at", "time"),
    Field("completedAtMs", "completed_at", "time"),
    Field("model", "model"),
    Field("provider", "llm_provider"),
    *_TOKENS,
    Field("responseMessageSourceId", "response_message_id", "link", "message"),
    Field("queryMessageSourceIds", "query_message_ids", "links", "message"),
    Field("metadata", "metadata"),
    _ext("sequence", "seq"),
    _ext("status", "status"),
)

MESSAGE = (
    Field("sourceMessageId", "source_message_id", "own"),
    Field("sourceTurnId", "turn_id", "link", "turn"),
    Field("role", "role"),
    Field("content", "content"),
    Field("sequence", "seq"),
    Field("createdAtMs", "created_at", "time"),
    Field("thinking", "thinking"),
    Field("contextJson", "context"),
    Field("metadataJson", "metadata"),
    _ext("messageType", "message_type"),
    _ext("meta", "meta"),
    _ext("parentSourceMessageId", "parent_message_id", "link", "message"),
    _ext("model", "model"),
    _ext("sourceRef", "source_ref"),
)

TOOL_CALL = (
    Field("sourceToolCallId", "source_tool_call_id", "own"),
    Field("sourceTurnId", "turn_id", "link", "turn"),
    Field("sourceMessageId", "message_id", "link", "message"),
    Field("toolName", "tool_name"),
    Field("toolNumber", "tool_number"),
    Field("paramsJson", "params"),
    Field("resultJson", "result", "result"),
    Field("status", "status"),
    Field("spawnedSourceSessionId", "spawned_source_session_id"),
    Field("startedAtMs", "started_at", "time"),
    Field("completedAtMs", "completed_at", "time"),
    Field("sequence", "seq"),
    Field("error", "error"),
    _ext("metadataJson", "metadata"),
)

# Cited sources (seed 003) are tracehouse's own: the draft has no such rows.
SOURCE = (
    _ext("sourceMessageId", "message_id", "link", "message"),
    _ext("sourceId", "source_id"),
    _ext("sourceType", "source_type"),
    _ext("title", "title"),
    _ext("uri", "uri"),
    _ext("contentPreview", "content_preview"),
    _ext("chunkNumber", "chunk_number"),
    _ext("metadata", "metadata"),
    _ext("createdAtMs", "created_at", "time"),
)

# The item's row lists by their field name, with the ledger table each fills.
ROWS: dict[str, tuple[str, tuple[Field, ...]]] = {
    "turns": ("turns", TURN),
    "messages": ("messages", MESSAGE),
    "toolCalls": ("tool_calls", TOOL_CALL),
    "sources": ("message_sources", SOURCE),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "turns": ("sourceTurnId",),
    "messages": ("sourceMessageId", "role"),
    "toolCalls": ("sourceToolCallId", "toolName"),
    "sources": ("sourceMessageId",),
}
# A pusher's tail links to rows it pushed before, whose source ids it no longer holds: such a
# link travels by the row's ledger id in the row's `ledgerLinks` object, field name → id (or
# ids). Only a gateway's push accepts it, and only to a row of the same session (`push_wire`).
LEDGER_LINKS = "ledgerLinks"


def iso_from_ms(ms: int) -> str:
    """`2026-01-01T00:00:00.000Z`, the form every parser stores."""
    # isoformat: a third faster than strftime, and the same text for every year 1970 … 9999
    return (_EPOCH + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds")[:-6] + "Z"


def ms_from_iso(text: str) -> int | None:
    """Epoch ms of a stored time; None for text that is not one (a hand-edited ledger)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
