"""An OpenHands conversation (`~/.openhands/sessions/<id>/`) → ledger rows (README.md here has
the mapping).

`metadata.json` names the conversation (title, repository, branch, times, the totals); its
events are `events/<n>.json`, one JSON object each: `{id, timestamp, source, message}` and either
`action` + `args` (what the user, the agent or the environment did) or `observation` + `content`
+ `extras` (what came back; `cause` names the action it answers). An action the model made
carries `tool_call_metadata` (the call's id and the model's response); `llm_metrics` carries the
running token totals. The `.pkl` files beside them are pickles: never read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracehouse.model.fields import iso_utc
from tracehouse.parsers.base import SHAPE_ERRORS, ParseOptions, Unit, UnitResult, shape_error
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.document import Read, parse_document
from tracehouse.parsers.kit.jsonl import TooLarge, read_file
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.untrusted import decode_json, mapping, not_json, place
from tracehouse.parsers.kit.usage import Usage

PROVIDER = "openhands"
LAYOUT = Layout(PROVIDER, ("sessions/*/metadata.json",))
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots
# `llm_metrics.accumulated_token_usage`: running totals, the prompt holding the cache (litellm's
# OpenAI shape); no reasoning count.
USAGE = Usage("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens",
              input_holds_cache=True)  # fmt: skip
COUNTS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens")
# Bookkeeping of the host: the agent's state, the workspace context it looked up.
QUIET = {"change_agent_state", "agent_state_changed", "recall", "null"}
# An untitled conversation is called `Conversation <first five characters of its id>`.
UNTITLED = "Conversation "


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    """The file store OpenHands mounts (`file_store_path`, default `~/.openhands`)."""
    return [home / ".openhands"]


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    return parse_document(PROVIDER, unit, cursor, options, build)


def build(unit: Unit, data: bytes, options: ParseOptions) -> Read:
    read = Read()
    meta, problem = decode_json(data, dict)
    if problem is not None:
        read.incomplete = not_json(problem)
        read.problems.append(
            (place(problem, "document"), f"not a conversation's metadata: {problem}")
        )
        return read
    sid = str(meta.get("conversation_id") or unit.path.parent.name)
    talk = Conversation(PROVIDER, sid, unit.key, options.max_field)
    talk.seen(iso_utc(meta.get("created_at")))
    events = _Events(talk)
    folder = os.path.join(os.path.dirname(unit.key), "events")
    for name in _numbered(folder):
        try:
            raw = read_file(os.path.join(folder, name))
        except (OSError, TooLarge) as exc:
            read.problems.append((f"events/{name}", f"unreadable: {exc}"))
            continue
        read.also_read += len(raw)
        event, problem = decode_json(raw, dict)  # a lone surrogate's escape kept as U+FFFD
        if problem is not None:
            read.problems.append((f"events/{name}", f"not an event: {problem}"))
            continue
        try:
            read.count(events.feed(event))
        except SHAPE_ERRORS as exc:
            read.problems.append((f"events/{name}", shape_error(exc)))
    talk.seen(iso_utc(meta.get("last_updated_at")))
    title = meta.get("title")
    repository = meta.get("selected_repository")
    read.sessions.append((talk, {
        "title": title if isinstance(title, str) and not title.startswith(UNTITLED) else None,
        "git_branch": meta.get("selected_branch"),
        "git_remote": repository if isinstance(repository, str) else None,
        "entrypoint": meta.get("trigger"),
        "metadata": {"git_provider": meta.get("git_provider"), "pr_number": meta.get("pr_number"),
                     "accumulated_cost": meta.get("accumulated_cost")},
    }))  # fmt: skip
    return read


class _Events:
    """Events in the order of their ids: an observation completes the call whose action it
    names (`cause`); the token totals grow from event to event."""

    def __init__(self, talk: Conversation) -> None:
        self.talk = talk
        self.totals = dict.fromkeys(COUNTS, 0)
        self.calls: dict[int, str] = {}  # an action's event id → its call's key

    def feed(self, event: Mapping[str, Any]) -> str:
        at, key = iso_utc(event.get("timestamp")), str(event.get("id"))
        source = str(event.get("source"))
        made = mapping(event.get("tool_call_metadata"))
        response = mapping(made.get("model_response"))
        model = str(response["model"]) if response.get("model") else None
        self._usage(mapping(mapping(event.get("llm_metrics")).get("accumulated_token_usage")))
        if "action" in event:
            kind, args = str(event["action"]), mapping(event.get("args"))
            if kind == "message":
                text = str(args.get("content") or "")
                if source == "user":
                    self.talk.prompt(key, text, at)
                else:
                    self.talk.reply(key, text, at, model=model)
            elif kind == "system":
                self.talk.preamble(key, str(args.get("content") or ""), at)
            elif made:
                said = self.talk.reply(key, str(args.get("thought") or ""), at, model=model)
                call = str(made.get("tool_call_id") or key)
                params = {k: v for k, v in args.items() if k != "thought"}
                self.talk.call(call, str(made.get("function_name") or kind), params, at,
                               message_id=said)  # fmt: skip
                self.calls[int(event.get("id") or 0)] = call
            elif kind not in QUIET:
                return self.talk.unknown(f"action.{kind}")
            return f"action.{kind}"
        kind = str(event.get("observation"))
        cause = event.get("cause")
        if isinstance(cause, int) and cause in self.calls:
            extras = mapping(event.get("extras"))
            code = mapping(extras.get("metadata")).get("exit_code")
            failed = kind == "error" or (isinstance(code, int) and code not in (0, -1))
            ended = {"exit_code": code} if isinstance(code, int) else None
            self.talk.result(self.calls.pop(cause), str(event.get("content") or ""), at,
                             failed=failed, metadata=ended)  # fmt: skip
        elif kind == "error":  # the host's: a call the model got wrong, a failed request
            self.talk.notice(key, str(event.get("content") or event.get("message") or ""), at,
                             {"notice": "error"})  # fmt: skip
        elif kind not in QUIET:
            return self.talk.unknown(f"observation.{kind}")
        return f"observation.{kind}"

    def _usage(self, totals: Mapping[str, Any]) -> None:
        """What the running totals grew by since the last event that carried them."""
        now = {k: v if isinstance(v, int) and not isinstance(v, bool) else 0
               for k, v in ((k, totals.get(k)) for k in COUNTS)}  # fmt: skip
        grown = {k: now[k] - self.totals[k] for k in COUNTS}
        if totals and any(grown.values()) and all(v >= 0 for v in grown.values()):
            self.talk.usage(USAGE.counts(grown))
            self.totals = now


def _numbered(folder: str) -> list[str]:
    """`events/<n>.json` in the order of n."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = [n for n in names if n.endswith(".json") and n[:-5].isdigit()]
    return sorted(found, key=lambda n: int(n[:-5]))
