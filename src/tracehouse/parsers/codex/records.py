"""Pure helpers over Codex rollout payloads: text, prompt kinds, origins, token usage."""

from __future__ import annotations

import re
from typing import Any

import orjson

from tracehouse.model.fields import count

PROVIDER = "codex"

# Text the CLI injects as a `user` message that nobody typed (FORMATS §2.6).
INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<INSTRUCTIONS>",
    "<user_action>",
    "<skill>",
    "<collaboration_mode>",
)
# Notices the CLI writes into the history about its own actions.
HOST_PREFIXES = ("<turn_aborted>", "<subagent_notification>")

# Usage vector order; cached ⊂ input and reasoning ⊂ output, as in the source.
USAGE_FIELDS = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "cache_write_input_tokens",
)

_UUID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", re.I)
_EXIT = re.compile(r"^(?:Exit code|Process exited with code):? (-?\d+)", re.M)


def thread_id_of(name: str) -> str | None:
    """The thread uuid at the end of a rollout file name."""
    found = _UUID.findall(name)
    return found[-1].lower() if found else None


def content_text(content: Any) -> tuple[str, int]:
    """Readable text of a message's content items, and how many images it had."""
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        return "", 0
    parts: list[str] = []
    images = 0
    for item in content:
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict):
            kind = item.get("type")
            if kind in ("input_image", "image", "image_url"):
                images += 1
                parts.append("[image]")
            elif isinstance(item.get("text"), str):
                parts.append(item["text"])
    return "\n".join(p for p in parts if p), images


def prompt_kind(role: str, text: str) -> str:
    """user (typed), system (injected context, developer instructions) or host (CLI notice)."""
    if role in ("developer", "system"):
        return "system"
    head = text.lstrip()[:64]
    if head.startswith(HOST_PREFIXES):
        return "host"
    if head.startswith(INJECTED_PREFIXES):
        return "system"
    return "user"


def origin(originator: Any, source: Any) -> str | None:
    """exec, cli, ide or desktop: how the session was driven."""
    name = str(originator or "").lower()
    src = source if isinstance(source, str) else ""
    if "exec" in name or src == "exec":
        return "exec"
    if "desktop" in name:
        return "desktop"
    if "vscode" in name or "ide" in name or src == "vscode":
        return "ide"
    if name or src:
        return "cli"
    return None


def spawn_parent(meta: dict[str, Any]) -> str | None:
    """The parent thread of a thread_spawn child, from either place it is written."""
    source = meta.get("source")
    if isinstance(source, dict):
        sub = source.get("subagent")
        if isinstance(sub, dict) and isinstance(sub.get("thread_spawn"), dict):
            parent = sub["thread_spawn"].get("parent_thread_id")
            if isinstance(parent, str) and parent:
                return parent
    parent = meta.get("parent_thread_id")
    return parent if isinstance(parent, str) and parent else None


def subagent_kind(meta: dict[str, Any]) -> str | None:
    """review, thread_spawn or another subagent kind; None for a top-level thread."""
    source = meta.get("source")
    if not isinstance(source, dict):
        return None
    sub = source.get("subagent")
    if isinstance(sub, str):
        return sub
    if isinstance(sub, dict) and sub:
        return str(next(iter(sub)))
    return "subagent"


def typed_by_user(message: dict[str, Any]) -> bool:
    """A `user` message item that says it came from the person (0.169 on): every content
    item's `provenance` in `internal_chat_message_metadata_passthrough` is `user`. Injected
    context (environment, instructions) carries none or another."""
    meta = message.get("internal_chat_message_metadata_passthrough")
    found = meta.get("content_item_metadata") if isinstance(meta, dict) else None
    if not isinstance(found, list) or not found:
        return False
    return all(
        isinstance(m, dict) and isinstance(m.get("provenance"), dict)
        and m["provenance"].get("type") == "user"
        for m in found
    )  # fmt: skip


def usage_vector(usage: Any) -> list[int] | None:
    if not isinstance(usage, dict):
        return None
    return [count(usage.get(k), k) for k in USAGE_FIELDS]


def token_delta(previous: list[int] | None, info: Any) -> tuple[list[int] | None, list[int] | None]:
    """What a `token_count` event adds, and the running total to compare the next one with.

    An event re-emitted with an unchanged total adds nothing. Otherwise the event's own
    `last_token_usage` is the increment; without it, the change of the total (all of it after a
    reset, since the running total can restart inside a file).
    """
    if not isinstance(info, dict):
        return None, previous
    total = usage_vector(info.get("total_token_usage"))
    if total is None:
        return None, previous
    if total == previous:
        return None, total
    delta = usage_vector(info.get("last_token_usage"))
    if delta is None:
        if previous is None or any(t < p for t, p in zip(total, previous, strict=True)):
            delta = total
        else:
            delta = [t - p for t, p in zip(total, previous, strict=True)]
    delta[1] = min(delta[1], delta[0])  # cached ⊂ input
    return (delta if any(delta) else None), total


# The first character of any JSON text; a failed orjson.loads costs an exception and its message.
_JSON_STARTS = frozenset('{["-0123456789tfn')


def parse_arguments(raw: Any) -> Any:
    """A function call's `arguments` is JSON text; keep it as JSON when it parses."""
    if not isinstance(raw, str):
        return raw
    if raw.lstrip()[:1] not in _JSON_STARTS:  # a freeform input (a patch): no JSON to try
        return {"raw": raw}
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {"raw": raw}


def output_text(output: Any) -> str:
    """A tool output: a string, JSON text `{output, metadata}`, or a list of content items."""
    if isinstance(output, list):
        return content_text(output)[0]
    if isinstance(output, dict):
        return str(output.get("output") or output.get("content") or orjson.dumps(output).decode())
    return "" if output is None else str(output)


def exit_code(output: Any) -> int | None:
    """The exit code a shell tool output reports, where it does."""
    if isinstance(output, str) and output.startswith("{"):
        try:
            data = orjson.loads(output)
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            meta = data.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
                return int(meta["exit_code"])
            output = data.get("output")
    if isinstance(output, str):
        found = _EXIT.search(output[:512])
        if found:
            return int(found.group(1))
    return None
