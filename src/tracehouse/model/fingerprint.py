"""Version-tagged content fingerprints (DESIGN §3, STYLE "Fingerprints").

A fingerprint is xxh3-128 over the canonical form of a row's content columns: values in column
order, serialized by orjson. The `v1:` tag names this canonical form; if it ever changes, the tag
changes with it and `store verify` can tell old rows from corrupt ones. Polars' own `.hash()` is
never persisted: it is not stable across versions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson
import xxhash

VERSION = "v1"


def canonical_json(value: Any) -> bytes:
    """Sorted-key JSON: the canonical text of a JSON value."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def digest(data: bytes) -> str:
    return f"{VERSION}:{xxhash.xxh3_128_hexdigest(data)}"


def fingerprint_values(values: Sequence[Any]) -> str:
    """Fingerprint of a row given as its content values in column order (JSON columns as text)."""
    return digest(orjson.dumps(values if isinstance(values, list | tuple) else list(values)))


def fingerprint_of(value: Any) -> str:
    return digest(canonical_json(value))


def combine(fingerprints: Iterable[str]) -> str:
    """One fingerprint for an ordered sequence of fingerprints."""
    h = xxhash.xxh3_128()
    for fp in fingerprints:
        h.update(fp.encode("utf-8", "surrogatepass"))  # a salt may carry a row: any text
        h.update(b"\n")
    return f"{VERSION}:{h.hexdigest()}"
