"""One Cursor conversation (composer or chat tab) → ledger rows (FORMATS §3.3–3.5).

Bubbles become messages in conversation order: type 1 (or C0 "user") is the user, 2 (or "ai")
the assistant, any other number an assistant message that records its type. A user bubble opens
a turn; the bubbles after it belong to that turn. `toolFormerData` becomes a tool call, thinking
goes to the message's `thinking`, an error notice (`errorDetails`) becomes a `host` message.
Files, code chunks, web and docs references become `message_sources`. Sub-composers are spawned
by a `subComposer` tool call of their parent, so the store links them whichever comes first.
"""

from __future__ import annotations

from typing import Any

import orjson

from tracehouse.model import fields, ids
from tracehouse.model.fields import cap, iso
from tracehouse.model.rows import TableBuffer, add_tokens, token_sums
from tracehouse.model.tables import MESSAGE_SOURCES, MESSAGES, TOKEN_COLUMNS, TOOL_CALLS, TURNS
from tracehouse.parsers.base import SHAPE_ERRORS, shape_error
from tracehouse.parsers.cursor import bubbles
from tracehouse.parsers.cursor.discover import PROVIDER
from tracehouse.parsers.cursor.records import Conversation
from tracehouse.parsers.cursor.text import bubble_text
from tracehouse.parsers.kit.untrusted import mapping, strings

TOOL_STATUS = {"completed": "completed", "error": "failed", "cancelled": "failed"}


class ConversationBuilder:
    def __init__(self, conv: Conversation, max_field: int) -> None:
        self.conv = conv
        self.sid = conv.source_id
        self.session_id = ids.session_id(PROVIDER, self.sid)
        self.max_field = max_field
        self.turns = TableBuffer(TURNS)
        self.messages = TableBuffer(MESSAGES)
        self.calls = TableBuffer(TOOL_CALLS)
        self.sources = TableBuffer(MESSAGE_SOURCES)
        self.turn: dict[str, Any] | None = None
        self.turn_rows: list[dict[str, Any]] = []
        self.first_prompt: str | None = None
        self.models: list[str] = []
        self.times: list[str] = []
        self.seq = 0

    # -- bubbles ---------------------------------------------------------------------------------

    def build(self) -> None:
        sent = bubbles.prompt_times(self.conv.bubbles)
        for index, bubble in enumerate(self.conv.bubbles):
            try:
                self._bubble(index, bubble, sent[index])
            except SHAPE_ERRORS as exc:  # this bubble is a reject; the conversation goes on
                where = bubble.get("_key") or f"{self.conv.location} bubble #{index}"
                self.conv.problems.append((str(where), shape_error(exc)))
        self._spawns()
        if self.turn is not None and self.conv.data.get("status") == "aborted":
            self.turn["status"] = "aborted"

    def _bubble(self, index: int, bubble: dict[str, Any], sent: str | None) -> None:
        bid = str(bubble.get("bubbleId") or bubble.get("id") or f"#{index}")
        kind = bubble.get("type")
        user = kind in (1, "user")
        at, ended = bubbles.times(bubble)
        if at is None and user:
            at = sent  # the prompt left when its answer's request was sent
        self.times.extend(t for t in (at, ended) if t)
        model = bubbles.model(bubble)
        if model:
            self.models.append(model)
        if user or self.turn is None:
            self._open_turn(bid, at)
        assert self.turn is not None
        text = bubble_text(bubble)
        thinking = bubbles.thinking(bubble)
        error = bubbles.error(bubble)
        tool = bubble.get("toolFormerData")
        if not isinstance(tool, dict) or not (tool.get("name") or tool.get("tool") is not None):
            tool = None
        message_id = None
        # A tool bubble is the assistant's turn to act: it is a message (often without text)
        # that carries the call, so the call keeps its place in the conversation.
        if text or thinking or tool or (user and bubble.get("richText")):
            message_id = self._message(bid, "user" if user else "assistant", text, thinking, at,
                                       model, bubble)  # fmt: skip
            if user:
                self.turn["query_message_ids"].append(message_id)
            else:
                self.turn["response_message_id"] = message_id
        if error:
            self._message(f"{bid}:error", "system", error, None, at, model, bubble, "host")
            self.turn["status"] = "error"
        if tool is not None:
            self._tool_call(bid, tool, message_id, at)
        self._tokens(bubble.get("tokenCount"))
        if message_id:
            self._sources(message_id, bubble, at)
        if at:
            self.turn["completed_at"] = at
        if model and not self.turn.get("model"):
            self.turn["model"] = model

    def _open_turn(self, bid: str, at: str | None) -> None:
        self.turn = self.turns.add(
            {
                "turn_id": ids.turn_id(PROVIDER, self.sid, bid),
                "session_id": self.session_id,
                "source_turn_id": bid,
                # a composer is one linear conversation: each turn follows the one before
                "parent_turn_id": self.turn_rows[-1]["turn_id"] if self.turn_rows else None,
                "seq": len(self.turns),
                "started_at": at,
                "completed_at": at,
                "status": "completed",
                "query_message_ids": [],
                **dict.fromkeys(TOKEN_COLUMNS),
            }
        )
        self.turn_rows.append(self.turn)

    def _message(
        self,
        bid: str,
        role: str,
        text: str | None,
        thinking: str | None,
        at: str | None,
        model: str | None,
        bubble: dict[str, Any],
        message_type: str | None = None,
    ) -> str:
        assert self.turn is not None
        message_id = ids.message_id(PROVIDER, self.sid, bid)
        if role == "user" and text and self.first_prompt is None:
            self.first_prompt = text.strip().splitlines()[0]
        metadata: dict[str, Any] = {}
        if bubble.get("type") not in (1, 2, "user", "ai"):
            metadata["bubble_type"] = bubble.get("type")
        if bubble.get("_unlisted"):
            metadata["unlisted"] = True  # not in the composer's headers; placed by time
        for key in ("requestId", "serverBubbleId", "unifiedMode", "capabilityType"):
            if bubble.get(key) not in (None, ""):
                metadata[key] = bubble[key]
        self.messages.add(
            {
                "message_id": message_id,
                "session_id": self.session_id,
                "turn_id": self.turn["turn_id"],
                "source_message_id": bid,
                "seq": self.seq,
                "role": role,
                "message_type": message_type or role,
                "content": cap(text, self.max_field) if text else text,
                "thinking": cap(thinking, self.max_field) if thinking else None,
                "created_at": at,
                "model": model,
                "metadata": metadata or None,
                "source_ref": f"{self.conv.location}#{bid}",
            }
        )
        self.seq += 1
        return message_id

    def _tool_call(
        self, bid: str, tool: dict[str, Any], message_id: str | None, at: str | None
    ) -> None:
        assert self.turn is not None
        call_key = str(tool.get("toolCallId") or bid)
        status = TOOL_STATUS.get(
            str(tool.get("status")), "running" if tool.get("status") else "pending"
        )
        error = tool.get("error")
        self.calls.add(
            {
                "tool_call_id": ids.tool_call_id(PROVIDER, self.sid, call_key),
                "session_id": self.session_id,
                "turn_id": self.turn["turn_id"],
                "message_id": message_id,
                "source_tool_call_id": call_key,
                "seq": len(self.calls),
                "tool_name": str(tool.get("name") or f"tool-{tool.get('tool')}"),
                "params": _json_arg(tool.get("rawArgs")) or _json_arg(tool.get("params")),
                # a failed call's error is what the model was given back: its result too
                "result": _text(tool.get("result") or error or None, self.max_field),
                "status": status,
                "error": _text(error, self.max_field) if error else None,
                "started_at": at,
                "completed_at": at if status in ("completed", "failed") else None,
            }
        )

    def _spawns(self) -> None:
        """Sub-composers (best-of-N, subagents) hang off their parent by a tool call."""
        data = self.conv.data
        for key in ("subComposerIds", "subagentComposerIds"):
            for child in strings(data.get(key)):
                if not self.turn_rows:
                    self._open_turn("subcomposers", iso(data.get("createdAt")))
                self.calls.add(
                    {
                        "tool_call_id": ids.tool_call_id(PROVIDER, self.sid, f"{key}:{child}"),
                        "session_id": self.session_id,
                        # the first turn: a later bubble must not move (rewrite) the link
                        "turn_id": self.turn_rows[0]["turn_id"],
                        "source_tool_call_id": f"{key}:{child}",
                        "seq": len(self.calls),
                        "tool_name": "subComposer",
                        "params": {"composerId": child, "via": key},
                        "status": "completed",
                        "spawned_session_id": ids.session_id(PROVIDER, child),
                        "spawned_source_session_id": child,
                    }
                )

    def _tokens(self, count: Any) -> None:
        assert self.turn is not None
        if not isinstance(count, dict):
            return
        got_in = fields.count(count.get("inputTokens"), "tokenCount.inputTokens")
        got_out = fields.count(count.get("outputTokens"), "tokenCount.outputTokens")
        got = (("input_tokens", got_in), ("output_tokens", got_out))
        add_tokens(self.turn, (*got, ("total_tokens", got_in + got_out)))

    def _sources(self, message_id: str, bubble: dict[str, Any], at: str | None) -> None:
        for kind, uri, title, preview in bubbles.references(bubble):
            self.sources.add(
                {
                    "message_id": message_id,
                    "session_id": self.session_id,
                    "source_id": ids.source_id(kind, uri),
                    "source_type": kind,
                    "title": title,
                    "uri": uri,
                    "content_preview": cap(preview, 2000) if preview else None,
                    "created_at": at,
                }
            )

    # -- the session -----------------------------------------------------------------------------

    def has_content(self) -> bool:
        return len(self.messages) > 0 or len(self.calls) > 0

    def session_row(self, where: dict[str, Any]) -> dict[str, Any]:
        data, conv = self.conv.data, self.conv
        totals = token_sums(self.turn_rows)
        created = iso(data.get("createdAt")) or iso(data.get("lastSendTime"))
        updated = iso(data.get("lastUpdatedAt")) or iso(data.get("lastSendTime"))
        times = [t for t in (created, updated, *self.times) if t]
        config = mapping(data.get("modelConfig"))
        if not isinstance(config, dict):
            config = {}
        title = data.get("name") or data.get("chatTitle") or self.first_prompt
        metadata = {
            "generation": conv.generation,
            "kind": conv.kind,
            "database": where.get("scope"),
            "workspace_id": where.get("workspace_id"),
            "composer_version": data.get("_v"),
            "status": data.get("status") or data.get("tabState"),
            "unified_mode": data.get("unifiedMode"),
            "force_mode": data.get("forceMode"),
            "subtitle": data.get("subtitle"),
            "context_tokens_used": data.get("contextTokensUsed"),
            "context_token_limit": data.get("contextTokenLimit"),
            "is_agentic": data.get("isAgentic"),
        }
        workspace = where.get("workspace")
        parent = where.get("parent_source_session_id")
        return {
            "session_id": self.session_id,
            "source_provider": PROVIDER,
            "source_session_id": self.sid,
            "label": ids.session_label(PROVIDER, self.sid),
            "title": cap(str(title), 200) if title else None,
            "created_at": min(times) if times else None,
            "updated_at": max(times) if times else None,
            "model": config.get("modelName") or (self.models[-1] if self.models else None),
            "workspace_path": workspace,
            "project": workspace.rstrip("/").rsplit("/", 1)[-1] if workspace else None,
            "entrypoint": data.get("unifiedMode") or conv.kind,
            "is_subagent": bool(data.get("isBestOfNSubcomposer") or where.get("is_child")),
            "parent_session_id": parent and ids.session_id(PROVIDER, parent),
            "parent_source_session_id": parent,
            "task_status": data.get("status"),
            **totals,
            "turn_count": len(self.turns),
            "message_count": len(self.messages),
            "tool_call_count": len(self.calls),
            "metadata": {k: v for k, v in metadata.items() if v not in (None, "")},
            "source_path": where.get("source_path"),
        }

    def buffers(self) -> list[TableBuffer]:
        return [self.turns, self.messages, self.calls, self.sources]


def _json_arg(value: Any) -> Any:
    if value in (None, ""):
        return None
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return {"raw": value}
    return value


def _text(value: Any, limit: int) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return cap(text, limit)
