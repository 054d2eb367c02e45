"""JSON columns as they are read back from a ledger, decoded without trusting them.

A ledger can hold a JSON value that no longer parses (an import by another producer, a hand
edit, a truncated copy) or one far too large to show. Readers must still show the session, so a
value is decoded only up to a size cap, and one that cannot be read becomes an `Unreadable`
that says so instead of raising.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

DECODE_LIMIT = 1 << 20  # larger JSON values are not decoded for display
EXCERPT = 120


@dataclass(frozen=True)
class Unreadable:
    """A stored JSON value that could not be decoded, and why."""

    reason: str
    excerpt: str

    def to_json(self) -> dict[str, Any]:
        return {"unreadable": self.reason, "excerpt": self.excerpt}


def decode(value: Any, limit: int = DECODE_LIMIT) -> Any:
    """The decoded value; None stays None; anything unreadable becomes an `Unreadable`."""
    if value is None or not isinstance(value, (str, bytes)):
        return value
    text = value if isinstance(value, str) else value.decode("utf-8", "replace")
    if len(text) > limit:
        return Unreadable(f"{len(text):,} characters, over the {limit:,} shown", text[:EXCERPT])
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return Unreadable(f"not JSON ({exc})", text[:EXCERPT])


def decode_mapping(value: Any) -> tuple[dict[str, Any], Unreadable | None]:
    """A JSON object column for rendering: the dict (empty when absent or unreadable) and the
    problem, if any. A value of another JSON type is unreadable as an object."""
    found = decode(value)
    if isinstance(found, Unreadable):
        return {}, found
    if found is None:
        return {}, None
    if not isinstance(found, dict):
        return {}, Unreadable(f"a JSON {type(found).__name__}, not an object", str(value)[:EXCERPT])
    return found, None


def for_json(value: Any) -> Any:
    """A JSON column for `--json` output: decoded, or the `Unreadable` as a small object."""
    found = decode(value)
    return found.to_json() if isinstance(found, Unreadable) else found
