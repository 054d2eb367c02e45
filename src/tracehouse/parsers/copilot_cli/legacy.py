"""A Copilot CLI session document of Oct 2025 and before
(`history-session-state/session_<uuid>_<ms>.json`) → ledger rows. Rewritten whole as the session
grew: `{sessionId, startTime, chatMessages, timeline}`. `chatMessages` is what the model saw
(OpenAI-shaped, no times); `timeline` is what the user saw, with times, and is what is read:
`user` a prompt, `copilot` a reply, `tool_call_completed` a call with its result, `info` and
`error` notices. No model and no token counts were written.
"""

from __future__ import annotations

from typing import Any

from tracehouse.model.fields import iso
from tracehouse.parsers.base import SHAPE_ERRORS, ParseOptions, Unit, shape_error
from tracehouse.parsers.copilot_cli.layout import PROVIDER
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.document import Read
from tracehouse.parsers.kit.untrusted import decode_json, items, mapping, not_json, place


def build(unit: Unit, data: bytes, options: ParseOptions) -> Read:
    read = Read()
    document, problem = decode_json(data)
    if problem is not None:
        read.incomplete = not_json(problem)
        read.problems.append((place(problem, "document"), f"not a session document: {problem}"))
        return read
    sid = str(document.get("sessionId") or unit.info["session"])
    talk = Conversation(PROVIDER, sid, unit.key, options.max_field)
    talk.seen(iso(document.get("startTime")))
    talk.note_model(document.get("selectedModel") and str(document["selectedModel"]))
    for index, entry in enumerate(items(document.get("timeline"))):
        if not isinstance(entry, dict):
            read.problems.append((f"timeline[{index}]", "not an object"))
            continue
        try:
            read.count(f"timeline.{_entry(talk, entry, index)}")
        except SHAPE_ERRORS as exc:
            read.problems.append((f"timeline[{index}]", shape_error(exc)))
    read.sessions.append((talk, {"metadata": {"layout": "legacy"}}))
    return read


def _entry(talk: Conversation, entry: Any, index: int) -> str:
    kind, at = str(entry.get("type")), iso(entry.get("timestamp"))
    key = str(entry.get("id") or index)
    if kind == "user":
        talk.prompt(
            key,
            str(entry.get("text") or ""),
            at,
            context={"sent": entry["expandedText"]} if entry.get("expandedText") else None,
        )
    elif kind == "copilot":
        talk.reply(key, str(entry.get("text") or ""), at)
    elif kind == "tool_call_completed":
        call = str(entry.get("callId") or key)
        outcome = mapping(entry.get("result"))
        talk.call(
            call,
            str(entry.get("name") or ""),
            entry.get("arguments"),
            at,
            metadata={"title": entry["toolTitle"]} if entry.get("toolTitle") else None,
        )
        log = outcome.get("log")
        talk.result(call, log if isinstance(log, str) else None, at,
                    failed=outcome.get("type") not in (None, "success"))  # fmt: skip
    elif kind in ("info", "error", "warning"):
        talk.notice(key, str(entry.get("text") or ""), at, {"notice": kind})
    else:
        return talk.unknown(f"{kind}")
    return kind
