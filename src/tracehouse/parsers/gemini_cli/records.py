"""A Gemini CLI chat file → its metadata and messages as the CLI itself would load them
(gemini-cli `loadConversationRecord`), with what could not be read named: a `.json` document,
or a `.jsonl` log of messages, `$set` patches and `$rewindTo` cuts (README.md here, "The two
forms"). Lines are split on `\\n` only: strings hold U+2028/U+2029.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tracehouse.parsers.kit.jsonl import LineError, blank, decode_line
from tracehouse.parsers.kit.untrusted import decode_json, not_json, place

MESSAGE_TYPES = ("user", "gemini", "info", "error", "warning")


@dataclass
class Chat:
    meta: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (location, reason)
    incomplete: bool = False  # the document, or its last line, is not whole yet
    accounting: Counter[str] = field(default_factory=Counter)
    # Records of a later version this reader does not know, by their `type` (or keys): kept
    # in the session's metadata so that nothing read goes unmentioned.
    unknown: Counter[str] = field(default_factory=Counter)


def load_document(data: bytes) -> Chat:
    """A `.json` chat: one document, `{sessionId, …, messages: […]}`. Empty files are real (a
    session opened and left) and hold nothing."""
    conv = Chat()
    if blank(data):  # not strip(): it copies a file that ends in a newline
        conv.accounting["empty file"] += 1
        return conv
    document, problem = decode_json(data)
    if problem is not None:
        conv.incomplete = not_json(problem)  # rewritten in place: perhaps read mid-write
        conv.problems.append((place(problem, "document"), f"not a chat: {problem}"))
        return conv
    messages = document.get("messages")
    conv.meta = {k: v for k, v in document.items() if k != "messages"}
    conv.accounting["metadata"] += 1
    if messages is not None and not isinstance(messages, list):
        conv.problems.append(("messages", "expected a list"))
        return conv
    for index, message in enumerate(messages or []):
        if _is_message(message):
            conv.messages.append(message)
            conv.accounting[f"message:{message['type']}"] += 1
        else:
            conv.problems.append((f"messages[{index}]", "not a message (needs id and type)"))
    return conv


def load_lines(data: bytes) -> Chat:
    """A `.jsonl` chat, replayed line by line."""
    conv = Chat()
    order: list[str] = []
    latest: dict[str, dict[str, Any]] = {}
    lines = data.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:  # invalid UTF-8 and a lone surrogate's escape are read as any JSONL line's are
            record = decode_line(line)
        except LineError as exc:
            if number == len(lines):  # no newline after it yet: still being written
                conv.incomplete = True
            else:
                conv.problems.append((f"line {number}", f"not valid JSON ({exc})"))
            continue
        if not isinstance(record, dict):
            conv.problems.append((f"line {number}", "expected a JSON object"))
            continue
        if "$rewindTo" in record:
            target = record["$rewindTo"]
            cut = order.index(target) if target in order else 0
            for gone in order[cut:]:
                latest.pop(gone, None)
            del order[cut:]
            conv.accounting["$rewindTo"] += 1
        elif "$set" in record:
            patch = record["$set"]
            if not isinstance(patch, dict):
                conv.problems.append((f"line {number}", "$set: expected an object"))
                continue
            if isinstance(patch.get("messages"), list):
                _merge_snapshot(patch["messages"], order, latest)
            conv.meta.update({k: v for k, v in patch.items() if k != "messages"})
            conv.accounting["$set"] += 1
        elif _is_message(record):
            _put(record, order, latest)
            conv.accounting[f"message:{record['type']}"] += 1
        elif "sessionId" in record and "type" not in record:
            conv.meta.update(record)
            conv.accounting["metadata"] += 1
        else:
            conv.accounting["unknown record"] += 1
            conv.unknown[str(record.get("type") or ",".join(sorted(record)))] += 1
    conv.messages = [latest[key] for key in order]
    return conv


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str) and "type" in value


def _put(message: dict[str, Any], order: list[str], latest: dict[str, dict[str, Any]]) -> None:
    if message["id"] not in latest:
        order.append(message["id"])
    latest[message["id"]] = message


def _merge_snapshot(
    snapshot: list[Any], order: list[str], latest: dict[str, dict[str, Any]]
) -> None:
    """A `$set.messages` snapshot merged into the messages read so far. Its copy of a tool's
    answer (`<id>_response`, the reply's `functionResponse` parts again) is left out: the reply
    it answers holds that result."""
    given = [m for m in snapshot if _is_message(m)]
    replies = {m["id"] for m in given}
    merged: list[str] = []
    for message in given:
        key = message["id"]
        if key.endswith("_response") and key.removesuffix("_response") in replies:
            continue
        if key not in latest:
            latest[key] = message
        merged.append(key)
    order[:] = _interleave(order, merged)


def _interleave(order: list[str], merged: list[str]) -> list[str]:
    """The earlier order, with the snapshot's new messages each put after the message the
    snapshot lists before it. What was read before and the snapshot no longer lists (a
    compressed history) was said all the same, and keeps its place."""
    known = set(order)
    out = list(order)
    after: str | None = None
    for key in merged:
        if key in known:
            after = key
            continue
        at = out.index(after) + 1 if after is not None else 0
        out.insert(at, key)
        known.add(key)
        after = key
    return out
