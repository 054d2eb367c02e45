"""Field limits shared by every parser (DESIGN §9)."""

from __future__ import annotations

import xxhash


def cap(text: str, limit: int) -> str:
    """Cut an over-long field, keeping a marker with the full length and hash (DESIGN §9)."""
    if len(text) <= limit:
        return text
    full = text.encode("utf-8", "surrogatepass")
    digest = xxhash.xxh3_128_hexdigest(full)
    return f"{text[:limit]}\n…[cut: {len(full)} bytes in full, xxh3-128 {digest}]"
