"""A Qwen Code chat recording → ledger rows (README.md here has the mapping, record by record).

`projects/<sanitized cwd>/chats/<sessionId>.jsonl`: records `{uuid, parentUuid, sessionId,
timestamp, type, cwd, version, gitBranch}`. `user` and `assistant` hold a Gemini `Content`
(`parts`: text, `thought` text, `functionCall`); `tool_result` a `functionResponse` per call;
`system` records are the host's: slash and @ commands, and `ui_telemetry` events.

Tokens: every model call of the session, a subagent's too, has a `qwen-code.api_response`
telemetry event; only the main agent's calls also have an `assistant` record, whose
`usageMetadata` repeats its event's counts. The events are counted, and an assistant's own
counts only where no event came before it (a release that wrote none). Both hold the cache reads
in the prompt count and the reasoning in the output count (`total = prompt + output`).

`tmp/<hash>/logs.json`, the prompt log inherited from Gemini CLI, brings back the prompts of
sessions with no chat file (releases before chats were recorded) (`kit.prompt_log`).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracehouse.model.fields import iso
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.kit.jsonl_session import JsonlSession, jsonl_parser
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.prompt_log import parse_prompt_log
from tracehouse.parsers.kit.usage import Usage
from tracehouse.parsers.untrusted import items, mapping

PROVIDER = "qwen-code"
# Both hold the cache reads in the prompt count and the reasoning in the output count.
EVENT_USAGE = Usage("input_token_count", "output_token_count", "cached_content_token_count",
                    reasoning="thoughts_token_count", input_holds_cache=True)  # fmt: skip
REPLY_USAGE = Usage("promptTokenCount", "candidatesTokenCount", "cachedContentTokenCount",
                    reasoning="thoughtsTokenCount", input_holds_cache=True)  # fmt: skip
LAYOUT = Layout(PROVIDER, ("projects/*/chats/*.jsonl", "tmp/*/logs.json"))
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    return [home / ".qwen"]


class QwenChat(JsonlSession):
    PROVIDER = PROVIDER

    def feed(self, record: dict[str, Any], offset: int) -> str:
        kind = str(record.get("type"))
        key, at = str(record.get("uuid") or offset), iso(record.get("timestamp"))
        for name in ("cwd", "version", "gitBranch"):
            if isinstance(record.get(name), str):
                self.kept[name] = record[name]
        parts = items(mapping(record.get("message")).get("parts"))
        if kind == "user":
            self.talk.prompt(key, _text(parts), at)
        elif kind == "assistant":
            self._reply(key, record, parts, at)
        elif kind == "tool_result":
            status = mapping(record.get("toolCallResult")).get("status")
            for part in parts:
                answer = mapping(mapping(part).get("functionResponse"))
                if answer:
                    response = mapping(answer.get("response"))
                    output = response.get("output", response.get("error"))
                    self.talk.result(str(answer.get("id") or key), _string(output), at,
                                     failed=status == "error" or "error" in response,
                                     name=str(answer.get("name") or ""))  # fmt: skip
        elif kind == "system":
            return self._system(key, str(record.get("subtype")),
                                mapping(record.get("systemPayload")), at)  # fmt: skip
        else:
            return self.talk.unknown(f"{kind}")
        return kind

    def _reply(self, key: str, record: Mapping[str, Any], parts: list[Any], at: str | None) -> None:
        said = [p for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        model = record.get("model")
        message_id = self.talk.reply(
            key, "\n\n".join(p["text"] for p in said if not p.get("thought")), at,
            thinking="\n\n".join(p["text"] for p in said if p.get("thought")) or None,
            model=str(model) if model else None,
        )  # fmt: skip
        for part in parts:
            call = mapping(mapping(part).get("functionCall"))
            if call:
                self.talk.call(str(call.get("id") or f"{key}:{call.get('name')}"),
                               str(call.get("name") or "tool"), call.get("args"), at,
                               message_id=message_id)  # fmt: skip
        usage = mapping(record.get("usageMetadata"))
        if usage and not self.kept.pop("counted", False):
            self.talk.usage(REPLY_USAGE.counts(usage))
        self.kept.pop("counted", None)

    def _system(self, key: str, subtype: str, payload: Mapping[str, Any], at: str | None) -> str:
        event = mapping(payload.get("uiEvent"))
        name = str(event.get("event.name") or "")
        if name == "qwen-code.api_response":
            self.talk.usage(EVENT_USAGE.counts(event))
            self.talk.note_model(event.get("model") and str(event["model"]), used=True)
            self.kept["counted"] = True
        elif name == "qwen-code.api_error":
            text = ": ".join(str(event[k]) for k in ("error_type", "error_message") if event.get(k))
            self.talk.notice(
                key, text, at, {"notice": "api_error", "status_code": event.get("status_code")}
            )
        elif subtype == "slash_command" and payload.get("phase") == "invocation":
            self.talk.prompt(key, str(payload.get("rawCommand") or ""), at, titled=False,
                             metadata={"command": True})  # fmt: skip
        elif subtype == "slash_command":
            shown = [str(mapping(i).get("text")) for i in items(payload.get("outputHistoryItems"))
                     if mapping(i).get("text")]  # fmt: skip
            if shown:
                self.talk.notice(key, "\n".join(shown), at, {"notice": "slash_command"})
        elif subtype == "custom_title" and isinstance(payload.get("title"), str):
            self.kept["title"] = payload["title"]
        elif subtype == "chat_compression":
            self.talk.notice(key, "The conversation was compressed.", at,
                             {"notice": "chat_compression", **payload})  # fmt: skip
        elif subtype == "at_command" or name == "qwen-code.tool_call":
            return f"quiet.system.{name or subtype}"  # the next user record, the tool result
        else:
            return self.talk.unknown(f"system.{name or subtype}")
        return f"system.{name or subtype}"

    def fields(self) -> dict[str, Any]:
        return {
            "title": self.kept.get("title"),
            "workspace_path": self.kept.get("cwd"),
            "git_branch": self.kept.get("gitBranch"),
            "tool_version": self.kept.get("version"),
        }


def _text(parts: list[Any]) -> str:
    return "".join(str(p["text"]) for p in parts if isinstance(p, dict) and p.get("text"))


def _string(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


_chat = jsonl_parser(QwenChat)


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    if unit.key.endswith("logs.json"):
        chats = os.path.join(glob.escape(unit.root), "projects", "*", "chats")
        return parse_prompt_log(
            PROVIDER,
            unit,
            cursor,
            options,
            lambda sid: bool(glob.glob(os.path.join(chats, f"{sid}.jsonl"))),
        )
    return _chat(unit, cursor, options)
