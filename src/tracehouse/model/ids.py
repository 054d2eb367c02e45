"""Deterministic ids (DESIGN §3).

An id is derived from the provider and the source's own ids, never from import order, time or
machine, so that a re-import, another machine or another store produces the same id.
"""

from __future__ import annotations

import re

import xxhash

from tracehouse.model.sources import clock_first, label_prefix

_SEP = "\x1f"  # unit separator: cannot occur in the source ids we hash


def stable_id(kind: str, provider: str, *parts: str) -> str:
    """`<kind>_<32 hex>`: xxh3-128 of the provider and the source ids."""
    key = _SEP.join((kind, provider, *parts))
    return f"{kind}_{xxhash.xxh3_128_hexdigest(key.encode('utf-8', 'surrogatepass'))}"


def session_id(provider: str, source_session_id: str) -> str:
    return stable_id("ses", provider, source_session_id)


def message_id(provider: str, source_session_id: str, source_message_id: str) -> str:
    return stable_id("msg", provider, source_session_id, source_message_id)


def turn_id(provider: str, source_session_id: str, source_turn_id: str) -> str:
    return stable_id("trn", provider, source_session_id, source_turn_id)


def tool_call_id(provider: str, source_session_id: str, source_tool_call_id: str) -> str:
    return stable_id("tc", provider, source_session_id, source_tool_call_id)


def source_id(kind: str, uri: str) -> str:
    return stable_id("src", kind, uri)


def session_label(provider: str, source_session_id: str, size: int = 8) -> str:
    """A short, stable, human-typable handle: `cc-6a963594` (provider prefix + id head).

    A subagent's source id is `<project>/agent-<id>`: its own agent id is the distinctive part.
    Labels are for people and may collide; ids never do (the store lengthens colliding ones).
    """
    prefix, head, from_end = label_parts(provider, source_session_id)
    return f"{prefix}-{head[-size:] if from_end else head[:size]}"


def label_parts(provider: str, source_session_id: str) -> tuple[str, str, bool]:
    """The provider prefix, the characters of the source id a label is cut from, and whether
    it is cut from their end (ids that begin with a clock: `Source.clock_first`)."""
    prefix = label_prefix(provider)
    tail = source_session_id.replace(":", "/").rsplit("/", 1)[-1].removeprefix("agent-")
    clock = clock_first(provider)
    found = re.fullmatch(clock, tail, re.IGNORECASE) if clock else None
    if found is not None:
        return prefix, _alnum(found.group(found.lastindex or 0)), True
    head = _alnum(tail)
    if not head:
        head = xxhash.xxh3_64_hexdigest(source_session_id.encode("utf-8", "surrogatepass"))
    return prefix, head, False


def _alnum(text: str) -> str:
    return "".join(ch for ch in text if ch.isalnum()).lower()
