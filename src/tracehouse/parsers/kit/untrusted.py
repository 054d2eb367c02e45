"""Reading values nobody vouches for: a whole JSON document, a database cell, a member of a record.

Every source reads what an agent wrote, and an agent (or a disk, or a person with an editor) can
write `null` where an object was, a number where text was, text where a blob was. Each reader
here returns the value it was asked for or the reason there is none, never raises: the caller
turns the reason into a reject at the place it read from (a line, a key, a row), and goes on
with the rest of the unit. One way for every source, so that no parser grows its own checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tracehouse.parsers.kit.jsonl import LineError, decode_line

BLOB = (bytes, bytearray, memoryview)
_LINE = re.compile(r"\bline (\d+) column \d+")
_PLAIN = re.compile(r"[^\s\x00-\x1f\x7f]{1,120}")


def json_type(value: Any) -> str:
    """A decoded value's type as JSON names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def cell_type(value: Any) -> str:
    """A database cell's type as SQLite names it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool | int):
        return "an INTEGER"
    if isinstance(value, float):
        return "a REAL"
    if isinstance(value, str):
        return "TEXT"
    return "a BLOB" if isinstance(value, BLOB) else type(value).__name__


def decode_json(raw: Any, expect: type | tuple[type, ...] = dict) -> tuple[Any, str | None]:
    """(value, None) for JSON text (bytes or str, as read from a file or a cell) whose value is
    of the `expect`ed type; (None, why) otherwise. Invalid UTF-8 and lone surrogates are read
    as JSONL lines are (`decode_line`)."""
    if isinstance(raw, str):
        data = raw.encode("utf-8", "surrogatepass")
    elif isinstance(raw, BLOB):
        data = bytes(raw)
    else:
        return None, f"{cell_type(raw)} where JSON text is expected"
    try:
        value = decode_line(data)
    except LineError as exc:
        return None, str(exc)
    if not isinstance(value, expect):
        return None, f"a JSON {json_type(value)}, not {_names(expect)}"
    return value, None


def not_json(problem: str) -> bool:
    """Whether `decode_json` found no JSON at all (cut short, say, as a file read while it is
    rewritten is) rather than JSON of another type."""
    return problem.startswith("invalid JSON")


def place(problem: str, default: str) -> str:
    """Where in a document a decoding problem is: `line N` when the decoder said so (a JSON
    syntax error names its line), else `default` (the document, a cell's key)."""
    found = _LINE.search(problem)
    return f"line {found.group(1)}" if found else default


def token(key: Any) -> str:
    """A key an agent wrote (a row's id, a meta key), as one word of a reject's location
    (`meta <key>`): itself where it is plain, else JSON with every space and control character
    escaped, so that a key of junk names one place and reads as no more than one."""
    text = key if isinstance(key, str) else str(key)
    if _PLAIN.fullmatch(text):
        return text
    return json.dumps(text[:120]).replace(" ", "\\u0020")


def blob(raw: Any) -> tuple[bytes | None, str | None]:
    """A cell that should hold bytes: (bytes, None), or (None, why). Never sizes a buffer from
    the cell: `bytes(2**62)` would try to allocate 4 EiB."""
    if isinstance(raw, BLOB):
        return bytes(raw), None
    return None, f"{cell_type(raw)} where a BLOB is expected"


def digest_bytes(raw: Any) -> bytes:
    """Any cell as bytes to hash, so that a change of its value or of its type is seen."""
    if isinstance(raw, BLOB):
        return bytes(raw)
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogatepass")
    return f"\x00{cell_type(raw)}:{raw!r}".encode()


def mapping(value: Any) -> Mapping[str, Any]:
    """A member that should be an object: itself, or an empty one."""
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[Any]:
    """A member that should be an array: itself, or an empty one."""
    return value if isinstance(value, list) else []


def strings(value: Any) -> list[str]:
    """A member that should be an array of strings: the strings in it."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _names(expect: type | tuple[type, ...]) -> str:
    kinds = expect if isinstance(expect, tuple) else (expect,)
    names: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)
