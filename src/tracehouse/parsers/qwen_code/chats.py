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

from tracehouse.model import ids
from tracehouse.model.fields import iso
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.jsonl_session import JsonlSession, jsonl_parser
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.prompt_log import parse_prompt_log
from tracehouse.parsers.kit.untrusted import items, mapping
from tracehouse.parsers.kit.usage import Usage

PROVIDER = "qwen-code"
# Both hold the cache reads in the prompt count and the reasoning in the output count.
EVENT_USAGE = Usage("input_token_count", "output_token_count", "cached_content_token_count",
                    reasoning="thoughts_token_count", input_holds_cache=True)  # fmt: skip
REPLY_USAGE = Usage("promptTokenCount", "candidatesTokenCount", "cachedContentTokenCount",
                    reasoning="thoughtsTokenCount", input_holds_cache=True)  # fmt: skip
# what an attribution snapshot says of the session: which files the agent wrote, how much of
# each, and the prompts since the last commit (for a commit's co-author line)
ATTRIBUTION = ("fileStates", "promptCount", "promptCountAtLastCommit")
SUBAGENT = "projects/*/subagents/*/*.jsonl"  # 0.24: <project>/subagents/<parent>/agent-<id>


def _info(top: str, parts: list[str]) -> Mapping[str, Any] | None:
    if parts[2] != "subagents":
        return {}
    parent, agent = parts[3], parts[4].removesuffix(".jsonl")
    # its `.meta.json` says how its task ended, written once it has: after its last line
    meta = os.path.join(top, *parts).removesuffix(".jsonl") + ".meta.json"
    return {"session": f"{parent}/{agent}", "parent": parent, "beside": [meta]}


LAYOUT = Layout(PROVIDER, ("projects/*/chats/*.jsonl", SUBAGENT, "tmp/*/logs.json"), _info,
                sidecars=("*.meta.json",))  # fmt: skip
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
        if name == "qwen-code.api_response" and self._childs_own(event):
            return f"quiet.system.{name}"  # counted in the subagent's session
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
        elif subtype == "attribution_snapshot":
            # one per prompt, each the whole state: the latest is the session's
            snapshot = mapping(payload.get("snapshot"))
            self.kept["attribution"] = {k: snapshot[k] for k in ATTRIBUTION if k in snapshot}
        elif subtype == "at_command" or name == "qwen-code.tool_call":
            return f"quiet.system.{name or subtype}"  # the next user record, the tool result
        else:
            return self.talk.unknown(f"system.{name or subtype}")
        return f"system.{name or subtype}"

    def _childs_own(self, event: Mapping[str, Any]) -> bool:
        """A subagent's model call, where the subagent has a transcript of its own (0.24) that
        counts it; before, a subagent's calls were only in its parent's events."""
        agent = event.get("subagent_id")
        if not isinstance(agent, str) or "/" in agent or agent.startswith("."):
            return False
        chats = os.path.dirname(self.unit.key)
        folder = os.path.join(os.path.dirname(chats), "subagents", self.talk.sid)
        return os.path.isfile(os.path.join(folder, f"agent-{agent}.jsonl"))

    def fields(self) -> dict[str, Any]:
        parent = self.unit.info.get("parent")
        if parent:
            return {**self._task(parent), "workspace_path": self.kept.get("cwd"),
                    "tool_version": self.kept.get("version")}  # fmt: skip
        return {
            "title": self.kept.get("title"),
            "workspace_path": self.kept.get("cwd"),
            "git_branch": self.kept.get("gitBranch"),
            "tool_version": self.kept.get("version"),
            "metadata": {"attribution": self.kept.get("attribution")},
        }

    def _task(self, parent: str) -> dict[str, Any]:
        """A subagent's link to its parent and its task, from the `.meta.json` beside it."""
        try:
            meta = mapping(orjson.loads(read_file(self.unit.info["beside"][0])))
        except (OSError, orjson.JSONDecodeError):
            meta = {}
        call = meta.get("toolUseId")
        status = {"completed": "completed", "failed": "failed", "cancelled": "aborted"}
        return {
            "is_subagent": True,
            "parent_source_session_id": parent,
            "parent_session_id": ids.session_id(PROVIDER, parent),
            "spawn_tool_call_id": ids.tool_call_id(PROVIDER, parent, call)
            if isinstance(call, str)
            else None,
            "spawn_source_tool_call_id": call if isinstance(call, str) else None,
            "task_description": _string(meta.get("description")),
            "task_status": status.get(str(meta.get("status"))),
            "metadata": {"agent_type": meta.get("agentType")},
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
