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
from tracehouse.model.rows import TableBuffer
from tracehouse.parsers.base import SHAPE_ERRORS, shape_error
from tracehouse.parsers.cursor import bubbles
from tracehouse.parsers.cursor.discover import PROVIDER
from tracehouse.parsers.cursor.records import Conversation
from tracehouse.parsers.cursor.text import bubble_text
from tracehouse.parsers.kit.conversation import Conversation as Talk
from tracehouse.parsers.kit.untrusted import mapping, strings

TOOL_STATUS = {"completed": "completed", "error": "failed", "cancelled": "failed"}


class ConversationBuilder:
    def __init__(self, conv: Conversation, max_field: int) -> None:
        self.conv = conv
        self.sid = conv.source_id
        # A turn's model is the first a bubble of it names; its end the last bubble's time.
        self.talk = Talk(PROVIDER, self.sid, conv.location, max_field, turn_model="first",
                         carry_provider=False, stated_ends=True)  # fmt: skip
        self.first_prompt: str | None = None
        self.times: list[str] = []
        self.first_turn: str | None = None

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
        if self.conv.data.get("status") == "aborted":
            self.talk.end_turn("aborted")
        self.talk.finish()

    def _bubble(self, index: int, bubble: dict[str, Any], sent: str | None) -> None:
        talk = self.talk
        bid = str(bubble.get("bubbleId") or bubble.get("id") or f"#{index}")
        kind = bubble.get("type")
        user = kind in (1, "user")
        at, ended = bubbles.times(bubble)
        if at is None and user:
            at = sent  # the prompt left when its answer's request was sent
        self.times.extend(t for t in (at, ended) if t)
        model = bubbles.model(bubble)
        text = bubble_text(bubble)
        thinking = bubbles.thinking(bubble)
        tool = bubble.get("toolFormerData")
        if not isinstance(tool, dict) or not (tool.get("name") or tool.get("tool") is not None):
            tool = None
        if user or talk.turn is None:
            talk.open_turn(bid, at)
            self.first_turn = self.first_turn or bid
        message_id = None
        # A tool bubble is the assistant's turn to act: it is a message (often without text)
        # that carries the call, so the call keeps its place in the conversation.
        if text or thinking or tool or (user and bubble.get("richText")):
            message_id = self._message(bid, user, text, thinking, at, model, bubble)
        error = bubbles.error(bubble)
        if error:
            talk.notice(f"{bid}:error", error, at, _metadata(bubble))
            talk.end_turn("error")
        if tool is not None:
            self._tool_call(bid, tool, message_id, at)
        self._tokens(bubble.get("tokenCount"))
        if message_id:
            self._sources(message_id, bubble, at)
        talk.end_turn(at=at)
        talk.note_model(model, used=True)

    def _message(self, bid: str, user: bool, text: str | None, thinking: str | None,
                 at: str | None, model: str | None, bubble: dict[str, Any]) -> str:  # fmt: skip
        talk, metadata = self.talk, _metadata(bubble)
        if not user:
            return talk.reply(bid, text, at, thinking=thinking, model=model, metadata=metadata)
        if text and self.first_prompt is None:
            self.first_prompt = text.strip().splitlines()[0]
        message_id = talk.message("user", "user", bid, text, at, thinking=thinking, model=model,
                                  metadata=metadata)  # fmt: skip
        assert talk.turn is not None
        talk.turn["query_message_ids"].append(message_id)
        return message_id

    def _tool_call(
        self, bid: str, tool: dict[str, Any], message_id: str | None, at: str | None
    ) -> None:
        key = str(tool.get("toolCallId") or bid)
        status = TOOL_STATUS.get(
            str(tool.get("status")), "running" if tool.get("status") else "pending"
        )
        error = tool.get("error")
        name = str(tool.get("name") or f"tool-{tool.get('tool')}")
        row = self.talk.call(key, name, None, at, message_id=message_id)
        row["params"] = _json_arg(tool.get("rawArgs")) or _json_arg(tool.get("params"))
        # a failed call's error is what the model was given back: its result too
        self.talk.settle(key, status, result=tool.get("result") or error or None,
                         error=error or None,
                         at=at if status in ("completed", "failed") else None)  # fmt: skip

    def _spawns(self) -> None:
        """Sub-composers (best-of-N, subagents) hang off their parent by a tool call."""
        data, talk = self.conv.data, self.talk
        for key in ("subComposerIds", "subagentComposerIds"):
            for child in strings(data.get(key)):
                if self.first_turn is None:
                    self.first_turn = "subcomposers"
                    talk.open_turn(self.first_turn, iso(data.get("createdAt")))
                # the first turn: a later bubble must not move (rewrite) the link
                with talk.answering(self.first_turn):
                    talk.call(f"{key}:{child}", "subComposer", {"composerId": child, "via": key},
                              None)  # fmt: skip
                    talk.settle(f"{key}:{child}", "completed", child=child)

    def _tokens(self, count: Any) -> None:
        if not isinstance(count, dict):
            return
        got_in = fields.count(count.get("inputTokens"), "tokenCount.inputTokens")
        got_out = fields.count(count.get("outputTokens"), "tokenCount.outputTokens")
        self.talk.usage({"input_tokens": got_in, "output_tokens": got_out,
                         "total_tokens": got_in + got_out})  # fmt: skip

    def _sources(self, message_id: str, bubble: dict[str, Any], at: str | None) -> None:
        for kind, uri, title, preview in bubbles.references(bubble):
            self.talk.cite(
                message_id,
                {
                    "source_type": kind,
                    "uri": uri,
                    "title": title,
                    "content_preview": cap(preview, 2000) if preview else None,
                },
                at,
            )

    # -- the session -----------------------------------------------------------------------------

    def has_content(self) -> bool:
        return self.talk.counts["messages"] > 0 or self.talk.counts["calls"] > 0

    def session_row(self, where: dict[str, Any]) -> dict[str, Any]:
        data, conv = self.conv.data, self.conv
        talk = self.talk
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
        parent = where.get("parent_source_session_id")
        return talk.session_row(
            title=str(title) if title else None,
            created_at=min(times) if times else None,
            updated_at=max(times) if times else None,
            model=config.get("modelName") or talk.model,
            workspace_path=where.get("workspace"),
            entrypoint=data.get("unifiedMode") or conv.kind,
            is_subagent=bool(data.get("isBestOfNSubcomposer") or where.get("is_child")),
            parent_session_id=parent and ids.session_id(PROVIDER, parent),
            parent_source_session_id=parent,
            task_status=data.get("status"),
            metadata=metadata,
            source_path=where.get("source_path"),
        )

    def buffers(self) -> list[TableBuffer]:
        return self.talk.buffers()


def _metadata(bubble: dict[str, Any]) -> dict[str, Any] | None:
    metadata: dict[str, Any] = {}
    if bubble.get("type") not in (1, 2, "user", "ai"):
        metadata["bubble_type"] = bubble.get("type")
    if bubble.get("_unlisted"):
        metadata["unlisted"] = True  # not in the composer's headers; placed by time
    for key in ("requestId", "serverBubbleId", "unifiedMode", "capabilityType"):
        if bubble.get(key) not in (None, ""):
            metadata[key] = bubble[key]
    return metadata or None


def _json_arg(value: Any) -> Any:
    if value in (None, ""):
        return None
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return {"raw": value}
    return value
