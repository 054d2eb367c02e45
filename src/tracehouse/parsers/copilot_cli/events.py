"""A Copilot CLI event log (`events.jsonl`, or a flat `<uuid>.jsonl`) → ledger rows.

Each line is `{type, data, id, timestamp, parentId}`. A `user.message` opens a turn (its
`content` is what was typed; `transformedContent`, what the model got, is kept as the message's
context). Copilot's own `assistant.turn_start`/`turn_end` mark model calls, not prompts: they
only close the ledger turn's time. `assistant.message` is a reply with its `toolRequests`;
`tool.execution_start`/`_complete` pair by `toolCallId` (a start never completed stays pending:
the user aborted). Host events (`session.info`, `session.error`, `abort`) are notices.

Tokens: a reply records only its `outputTokens`; `session.usage_record` (1.0.102) a request's
counts; `session.shutdown` the session's totals per model, since it began (a resumed session's
shutdown counts the earlier runs too). Each shutdown adds to the turn it ends what nothing
before it counted, so a session's totals are its last shutdown's, and a session that never shut
down has its output tokens only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracehouse.model.fields import count, iso
from tracehouse.model.tables import TOKEN_COLUMNS
from tracehouse.parsers.copilot_cli.layout import PROVIDER
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.jsonl_session import JsonlSession
from tracehouse.parsers.kit.untrusted import items, mapping
from tracehouse.parsers.kit.usage import Usage

# Per model and per request: `inputTokens` holds the cache reads and writes (it is the input,
# cache_read and cache_write of `tokenDetails` together), `outputTokens` the reasoning.
USAGE = Usage("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens",
              "reasoningTokens", input_holds_cache=True)  # fmt: skip
NOTICES = ("session.info", "session.error", "session.warning", "abort", "session.compaction")
QUIET = ("system.message", "hook.start", "hook.end", "permission.requested",
         "permission.completed", "assistant.turn_start", "session.resume")  # fmt: skip


class EventLog(JsonlSession):
    PROVIDER = PROVIDER

    def feed(self, record: dict[str, Any], offset: int) -> str:
        kind = str(record.get("type"))
        data, at = mapping(record.get("data")), iso(record.get("timestamp"))
        key = str(record.get("id") or offset)
        if kind == "session.start":
            self.kept.update(version=data.get("copilotVersion"), context=data.get("context"))
            self.talk.seen(iso(data.get("startTime")) or at)
        elif kind == "session.model_change":
            self.talk.note_model(data.get("newModel") and str(data["newModel"]))
        elif kind == "user.message":
            sent = data.get("transformedContent")
            content = str(data.get("content") or "")
            self.talk.prompt(key, content, at, context={"sent": sent} if sent else None,
                             titled=not content.startswith("/"))  # fmt: skip
        elif kind == "assistant.message":
            self._reply(key, data, at)
        elif kind == "tool.execution_start":
            self.talk.call(str(data.get("toolCallId") or key), str(data.get("toolName") or ""),
                           data.get("arguments"), at)  # fmt: skip
        elif kind == "tool.execution_complete":
            outcome = mapping(data.get("result"))
            text = outcome.get("content") or mapping(data.get("error")).get("message")
            self.talk.result(str(data.get("toolCallId") or key), _text(text), at,
                             failed=data.get("success") is False)  # fmt: skip
        elif kind == "assistant.turn_end":
            self.talk.end_turn(at=at)
        elif kind == "session.usage_record":  # 1.0.102: the request's usage, under `usage`
            self._count(USAGE.counts(mapping(data.get("usage"))))
        elif kind == "session.shutdown":
            self._shutdown(data)
        elif kind in NOTICES:
            text = data.get("message") or data.get("reason") or kind
            self.talk.notice(key, str(text), at, {"notice": kind, **_kinds(data)})
            if kind == "abort":
                self.talk.end_turn("aborted", at)
        elif kind in QUIET:
            return f"quiet.{kind}"
        else:
            return self.talk.unknown(f"{kind}")
        return kind

    def _reply(self, key: str, data: Mapping[str, Any], at: str | None) -> None:
        model = data.get("model")
        thinking = data.get("reasoningText")
        message_id = self.talk.reply(
            str(data.get("messageId") or key), _text(data.get("content")), at,
            thinking=thinking if isinstance(thinking, str) else None,
            model=str(model) if model else None,
        )  # fmt: skip
        for request in items(data.get("toolRequests")):
            request = mapping(request)
            self.talk.call(str(request.get("toolCallId") or key), str(request.get("name") or ""),
                           request.get("arguments"), at, message_id=message_id)  # fmt: skip
        output = count(data.get("outputTokens"), "outputTokens")
        if output:
            self._count({"output_tokens": output})

    def _count(self, counts: Mapping[str, int]) -> None:
        self.talk.usage(counts)
        seen = self.kept.setdefault("seen", {})
        for column, value in counts.items():
            seen[column] = seen.get(column, 0) + value

    def _shutdown(self, data: Mapping[str, Any]) -> None:
        totals = dict.fromkeys(TOKEN_COLUMNS, 0)
        models = data.get("modelMetrics") or mapping(data.get("accountingSnapshot")).get(
            "modelMetrics"
        )
        for metrics in mapping(models).values():
            for column, value in USAGE.counts(mapping(mapping(metrics).get("usage"))).items():
                totals[column] += value
        seen = self.kept.get("seen", {})
        self._count({c: max(totals[c] - seen.get(c, 0), 0) for c in TOKEN_COLUMNS})
        self.kept["shutdown"] = {
            k: data.get(k)
            for k in ("shutdownType", "totalPremiumRequests", "codeChanges", "currentModel")
        }

    def fields(self) -> dict[str, Any]:
        context = mapping(self.kept.get("context"))
        beside = self.unit.info.get("beside")
        space = workspace(beside[0]) if beside else {}
        version = self.kept.get("version")
        return {
            "title": space.get("name") or space.get("summary"),
            "workspace_path": context.get("cwd") or space.get("cwd"),
            "git_branch": context.get("branch") or space.get("branch"),
            "git_commit": context.get("headCommit"),
            "git_remote": context.get("repository") or space.get("repository"),
            "tool_version": version if version != "unknown" else None,
            "metadata": {
                "shutdown": self.kept.get("shutdown"),
                "layout": self.unit.info.get("form"),
            },
        }


def workspace(path: str) -> dict[str, str]:
    """A 1.0 session's `workspace.yaml`: flat `key: value` lines (its title is `name`)."""
    try:
        text = read_file(path).decode()
    except (OSError, UnicodeDecodeError):
        return {}
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep and not line.startswith((" ", "-", "#")):
            out[key.strip()] = value.strip().strip("'\"")
    return {k: v for k, v in out.items() if v}


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return str(value)


def _kinds(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in ("errorType", "infoType", "statusCode") if data.get(k)}
