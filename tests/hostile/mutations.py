"""Hostile variants of real lines and values: what a corrupted disk, a buggy agent release or an
adversary could put where tracehouse reads.

A mutation is chosen by a few integers (so hypothesis can shrink it and a bench can draw it from a
seed): which line, which place in the parsed record, which hostile value. The value is spliced
into the record's JSON text as raw bytes, so literals no JSON writer produces (`NaN`, 2^64,
1,000 levels of nesting, invalid UTF-8) reach the parser exactly as they would from disk.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

_MARK = "\u0000hostile\u0000"
_MARK_JSON = orjson.dumps(_MARK)

HOSTILE_VALUES: tuple[bytes, ...] = (
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"9223372036854775808",  # 2^63: past int64, still an orjson int
    b"18446744073709551615",  # 2^64 - 1
    b"-9223372036854775809",
    b"1" * 400,  # a float only in name: inf once parsed
    b"1e400",
    b"[" * 300 + b"]" * 300,  # past orjson's writer (254), within its reader (1024)
    b'{"a":' * 300 + b"1" + b"}" * 300,
    b"[" * 1100 + b"]" * 1100,  # past every reader's limit
    b'""',
    b"[]",
    b"{}",
    b"null",
    b"true",
    b"-1",
    b"0",
    b"3.5",
    b'"\\ud800"',  # a lone surrogate
    b'"\xff\xfe\x80 invalid utf-8"',
    b'"nul \\u0000 inside"',
    b'"2026-13-45T99:99:99Z"',
    b'"' + b"x" * (2 * 1024 * 1024) + b'"',  # past the 1 MiB field cap
    b'{"type": "user", "message": {"role": "user", "content": 7}}',
    b'[{"type": "tool_use"}, {"type": "text", "text": null}, 5]',
)
LINE_MUTATIONS = ("value", "drop-key", "truncate", "bad-byte", "duplicate")


@dataclass(frozen=True)
class Mutation:
    kind: str  # one of LINE_MUTATIONS
    place: int  # which value / key / byte, modulo what the line has
    value: int  # which of HOSTILE_VALUES

    def describe(self) -> str:
        shown = HOSTILE_VALUES[self.value % len(HOSTILE_VALUES)][:40]
        return f"{self.kind}@{self.place} {shown!r}"


def places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside a decoded record, the record itself first."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from places(item, (*path, index))


def _replaced(record: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(record, dict):
        return {k: _replaced(v, rest, new) if k == head else v for k, v in record.items()}
    return [_replaced(v, rest, new) if i == head else v for i, v in enumerate(record)]


def _dropped(record: Any, path: tuple[Any, ...]) -> Any:
    if len(path) == 1:
        if isinstance(record, dict):
            return {k: v for k, v in record.items() if k != path[0]}
        return [v for i, v in enumerate(record) if i != path[0]]
    head, rest = path[0], path[1:]
    if isinstance(record, dict):
        return {k: _dropped(v, rest) if k == head else v for k, v in record.items()}
    return [_dropped(v, rest) if i == head else v for i, v in enumerate(record)]


def mutate_line(line: bytes, m: Mutation) -> bytes:
    """The line after the mutation (possibly several lines, for `duplicate`)."""
    if m.kind == "truncate":
        return line[: m.place % max(1, len(line))]
    if m.kind == "bad-byte":
        at = m.place % max(1, len(line))
        return line[:at] + b"\xff" + line[at:]
    if m.kind == "duplicate":
        return line + b"\n" + line
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return line
    paths = list(places(record))
    if m.kind == "drop-key":
        paths = [p for p in paths if p]
        if not paths:
            return line
        return orjson.dumps(_dropped(record, paths[m.place % len(paths)]))
    path = paths[m.place % len(paths)]
    text = orjson.dumps(_replaced(record, path, _MARK))
    return text.replace(_MARK_JSON, HOSTILE_VALUES[m.value % len(HOSTILE_VALUES)], 1)


def mutate_file(data: bytes, line_index: int, m: Mutation) -> tuple[bytes, int]:
    """The file with one of its non-blank lines mutated, and that line's number (1-based)."""
    lines = data.split(b"\n")
    numbered = [i for i, line in enumerate(lines) if line.strip()]
    if not numbered:
        return data, 0
    at = numbered[line_index % len(numbered)]
    lines[at] = mutate_line(lines[at], m)
    return b"\n".join(lines), at + 1
