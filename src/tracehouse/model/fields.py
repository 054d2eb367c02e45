"""Field limits shared by every parser (DESIGN §9)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import xxhash

# The largest count a JSON reader anywhere holds exactly (2^53 - 1): a token count above it is
# not a count but a corrupted or hostile value, and would not fit the ledger's int64 sums.
MAX_COUNT = 2**53 - 1
EPOCH_2000_MS = 946_684_800_000


def cap(text: str, limit: int) -> str:
    """Cut an over-long field, keeping a marker with the full length and hash (DESIGN §9)."""
    if len(text) <= limit:
        return text
    full = text.encode("utf-8", "surrogatepass")
    digest = xxhash.xxh3_128_hexdigest(full)
    return f"{text[:limit]}\n…[cut: {len(full)} bytes in full, xxh3-128 {digest}]"


def count(value: Any, name: str) -> int:
    """A token count as a source wrote it: absent or not a number is 0; a number that cannot be
    a count raises ValueError naming the field, so the record becomes a reject, not a crash."""
    if type(value) is int and 0 <= value <= MAX_COUNT:  # nearly every count: one check
        return value
    if value is None or isinstance(value, bool):
        return 0
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{name} is not a finite number")
        value = int(value)
    elif isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            return 0
    elif not isinstance(value, int):
        return 0
    if not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{name} = {value} is not a token count (0 … 2^53-1)")
    return int(value)


def iso(value: Any) -> str | None:
    """ms-epoch integers (composer and timing fields) and ISO strings (`_v3` bubbles)."""
    if isinstance(value, bool) or value in (None, "", 0):
        return None
    if isinstance(value, (int, float)):
        if value < EPOCH_2000_MS:  # a duration or a relative clock, not a point in time
            return None
        return (
            datetime.fromtimestamp(value / 1000, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )
    return str(value)


def iso_seconds(value: Any) -> str | None:
    """A Unix time in seconds (Crush's columns, Kimi's wire log) as ISO-8601 UTC."""
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        return None
    return iso(value * 1000)


def iso_utc(value: Any) -> str | None:
    """An ISO-8601 text as agents' databases write it — `T` or a space, no zone (UTC, as
    SQLite's `CURRENT_TIMESTAMP` and servers in containers write it), up to nanoseconds
    (Zed's, Warp's) — as the ledger's ISO-8601 UTC in milliseconds; None if it is none."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)  # 3.11: a space, `Z`, digits past µs all read
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
