"""A Factory Droid session file → ledger rows (README.md here has the mapping).

`~/.factory/sessions/<cwd slug>/<sessionId>.jsonl` (earlier, directly in `sessions/`): a
`session_start` line (`id`, `title`, `sessionTitle`, `cwd`, `version`), then `message` lines
`{id, timestamp, message: {role, content}}`, the content Anthropic-shaped (`text`, `thinking`,
`tool_use`, `tool_result`). `<sessionId>.settings.json` beside it holds the model and the
session's token totals.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracehouse.model.fields import iso
from tracehouse.parsers.kit.jsonl import TooLarge, read_file
from tracehouse.parsers.kit.jsonl_session import JsonlSession, jsonl_parser, text_of
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.untrusted import items, mapping

PROVIDER = "droid"


def _info(top: str, parts: list[str]) -> Mapping[str, Any]:
    # `<sessionId>.settings.json`: its model and running totals, written after each answer
    path = os.path.join(top, *parts)
    return {"beside": [path.removesuffix(".jsonl") + ".settings.json"]}


LAYOUT = Layout(PROVIDER, ("sessions/*.jsonl", "sessions/*/*.jsonl"), _info,
                sidecars=("*.settings.json",))  # fmt: skip
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots
# A subagent's session: the Task tool's prompt, as Droid opens it (it names no parent).
SUBAGENT = "# Task Tool Invocation"
SETTINGS = ("model", "reasoningEffort", "interactionMode", "autonomyLevel", "autonomyMode",
            "assistantActiveTimeMs", "providerLock", "apiProviderLock", "tokenUsage")  # fmt: skip


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    return [home / ".factory"]


class DroidSession(JsonlSession):
    PROVIDER = PROVIDER

    def feed(self, record: dict[str, Any], offset: int) -> str:
        kind = str(record.get("type"))
        if kind == "session_start":
            self.kept.update({k: record.get(k) for k in ("title", "sessionTitle", "cwd",
                                                         "version")})  # fmt: skip
            return kind
        if kind != "message":
            return self.talk.unknown(kind)
        message = mapping(record.get("message"))
        role, at = str(message.get("role")), iso(record.get("timestamp"))
        key = str(record.get("id") or offset)
        content = message.get("content")
        parts = [mapping(p) for p in items(content)]
        if role == "user":
            for part in (p for p in parts if p.get("type") == "tool_result"):
                self.talk.result(str(part.get("tool_use_id")),
                                 text_of(part.get("content")), at,
                                 failed=part.get("is_error") is True)  # fmt: skip
            text = text_of(content)
            if text:
                self.talk.prompt(key, text, at)
            return "user" if text else "tool_result"
        if role != "assistant":
            return self.talk.unknown(f"message.{role}")
        thinking = text_of(content, ("thinking",), "thinking") or None
        said = self.talk.reply(key, text_of(content), at, thinking=thinking)
        for n, part in enumerate(p for p in parts if p.get("type") == "tool_use"):
            self.talk.call(str(part.get("id") or f"{key}:{n}"), str(part.get("name") or "tool"),
                           part.get("input"), at, message_id=said)  # fmt: skip
        return "assistant"

    def fields(self) -> dict[str, Any]:
        settings = _settings(self.unit.info["beside"][0])
        title = self.kept.get("sessionTitle") or self.kept.get("title")
        model = settings.get("model")
        return {
            **({"model": model} if isinstance(model, str) else {}),
            "title": title if isinstance(title, str) and not title.startswith(SUBAGENT) else None,
            "workspace_path": self.kept.get("cwd"),
            "is_subagent": isinstance(title, str) and title.startswith(SUBAGENT),
            # its counts are the session's totals only: kept, not spread over turns
            "metadata": {
                "format_version": self.kept.get("version"),
                **{k: settings.get(k) for k in SETTINGS if k in settings},
            },
        }


def _settings(path: str) -> Mapping[str, Any]:
    """`<sessionId>.settings.json` beside the transcript."""
    try:
        return mapping(orjson.loads(read_file(path)))
    except (OSError, TooLarge, orjson.JSONDecodeError):
        return {}


parse = jsonl_parser(DroidSession)
