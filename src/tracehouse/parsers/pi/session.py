"""A Pi session file → ledger rows (README.md here has the mapping, entry by entry).

`sessions/--<cwd>--/<time>_<uuid>.jsonl`: a `session` header, then entries `{type, id,
parentId, timestamp}`. A `message` entry holds what the model saw: `user`, `assistant` (text,
thinking and `toolCall` parts, `usage` with its USD `cost`) and `toolResult`. Pi's `input`
leaves the cache reads and writes out and its `output` holds the reasoning (`totalTokens` is
their sum); the ledger's input holds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracehouse.model.fields import iso
from tracehouse.parsers.kit.jsonl_session import JsonlSession, jsonl_parser, text_of
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.untrusted import items, mapping
from tracehouse.parsers.kit.usage import Usage, dollars

PROVIDER = "pi"
# Pi's `input` leaves the cache reads and writes out; its `output` holds the reasoning.
USAGE = Usage("input", "output", "cacheRead", "cacheWrite", "reasoning", input_holds_cache=False)
# What the host added, not the model: shown apart from the conversation.
NOTICES = {"compaction": "summary", "branch_summary": "summary", "custom_message": "content"}
LAYOUT = Layout(
    PROVIDER,
    ("sessions/*/*.jsonl",),
    # `<ISO time>_<uuid>.jsonl`: the uuid is the session's id (the header says it too).
    lambda top, parts: {"session": parts[-1].removesuffix(".jsonl").rpartition("_")[2]},
)
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    moved = env.get("PI_CODING_AGENT_DIR")
    return [Path(moved).expanduser() if moved else home / ".pi" / "agent"]


class PiSession(JsonlSession):
    PROVIDER = PROVIDER

    def feed(self, record: dict[str, Any], offset: int) -> str:
        kind = str(record.get("type"))
        at = iso(record.get("timestamp"))
        key = str(record.get("id") or offset)
        if kind == "session":
            self.kept.update(cwd=record.get("cwd"), version=record.get("version"),
                             id=record.get("id"))  # fmt: skip
            self.talk.seen(at)
        elif kind == "model_change":
            self.talk.note_model(record.get("modelId"), record.get("provider"))
        elif kind == "thinking_level_change":
            self.kept["thinking_level"] = record.get("thinkingLevel")
        elif kind == "session_info" and isinstance(record.get("name"), str):
            self.kept["name"] = record["name"]
        elif kind == "message":
            return self._message(key, mapping(record.get("message")), at)
        elif kind in NOTICES:
            text = text_of(record.get(NOTICES[kind]))
            self.talk.notice(key, text, at, {"notice": kind})
        else:
            return self.talk.unknown(f"{kind}")
        return kind

    def _message(self, key: str, message: Mapping[str, Any], at: str | None) -> str:
        role = str(message.get("role"))
        content = message.get("content")
        if role == "user":
            self.talk.prompt(key, text_of(content), at)
        elif role == "assistant":
            self._reply(key, message, at)
        elif role == "toolResult":
            self.talk.result(
                str(message.get("toolCallId") or key), text_of(content), at,
                failed=message.get("isError") is True, name=str(message.get("toolName") or ""),
                metadata={"details": message["details"]} if message.get("details") else None,
            )  # fmt: skip
        else:  # bashExecution, custom, the summaries: what the host ran or added
            text = text_of(content) or str(message.get("output") or message.get("summary") or "")
            self.talk.notice(key, text, at, {"notice": role})
        return f"message.{role}"

    def _reply(self, key: str, message: Mapping[str, Any], at: str | None) -> None:
        content = message.get("content")
        model, provider = message.get("model"), message.get("provider")
        meta = {k: message.get(k) for k in ("stopReason", "api", "errorMessage")
                if message.get(k)}  # fmt: skip
        message_id = self.talk.reply(
            key, text_of(content), at, thinking=text_of(content, ("thinking",), "thinking"),
            model=model and str(model), llm_provider=provider and str(provider), metadata=meta,
        )  # fmt: skip
        for part in items(content):
            if isinstance(part, dict) and part.get("type") == "toolCall":
                call_key = str(part.get("id") or f"{key}:{part.get('name')}")
                self.talk.call(call_key, str(part.get("name") or "tool"),
                               part.get("arguments"), at, message_id=message_id)  # fmt: skip
        usage = mapping(message.get("usage"))
        if usage:
            self.talk.usage(USAGE.counts(usage), dollars(mapping(usage.get("cost")).get("total")))
        if message.get("stopReason") in ("error", "aborted"):
            self.talk.end_turn("error" if message["stopReason"] == "error" else "aborted")

    def fields(self) -> dict[str, Any]:
        return {
            "title": self.kept.get("name"),
            "workspace_path": self.kept.get("cwd"),
            "metadata": {"format_version": self.kept.get("version"),
                         "thinking_level": self.kept.get("thinking_level")},
        }  # fmt: skip


parse = jsonl_parser(PiSession)
