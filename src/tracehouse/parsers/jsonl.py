"""Reading the complete lines of an append-only JSONL file from an offset (DESIGN §5)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

READ_BLOCK = 4 * 1024 * 1024


@dataclass(frozen=True)
class Chunk:
    data: bytes  # complete lines only
    start: int
    end: int  # offset just past the last consumed line
    eof: bool  # everything up to the stat size was consumed


def read_chunk(
    f: BinaryIO, start: int, limit: int, budget: int, *, final_line_complete: bool
) -> Chunk:
    """Bytes [start, end) ending on a newline, about `budget` long (longer for one huge line).

    `limit` is the size seen by stat: bytes written after it wait for the next pass. A last line
    without a newline is taken only when `final_line_complete` (the file is quiet) and it parses.
    """
    f.seek(start)
    data = f.read(max(0, min(budget, limit - start)))
    while b"\n" not in data and start + len(data) < limit:
        more = f.read(min(READ_BLOCK, limit - start - len(data)))
        if not more:
            break
        data += more
    reached_limit = start + len(data) >= limit
    cut = data.rfind(b"\n") + 1
    if reached_limit and cut < len(data) and final_line_complete and _parses(data[cut:]):
        cut = len(data)
    return Chunk(data[:cut], start, start + cut, reached_limit and cut == len(data))


def _parses(line: bytes) -> bool:
    return loads(line) is not None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class LineError(ValueError):
    """A line that is not a JSON value tracehouse can keep; the message says why."""


def _refuse_constant(name: str) -> Any:
    raise LineError(f"invalid JSON: {name} is not a JSON number")


def decode_line(line: bytes) -> Any:
    """A JSON line's value, or LineError saying why there is none.

    Agents write what tools print: invalid UTF-8 bytes and lone surrogate escapes (`\ud83d`
    without its pair) occur (FORMATS §4.7). orjson refuses both; such a line is decoded again
    with replacement characters instead of being rejected, so its text is kept and can be stored.
    What stays refused: `NaN`/`Infinity` (not JSON; no store can hold them) and nesting past
    orjson's limit (the stdlib decoder would recurse until Python's stack gives out).
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        first = str(exc)  # the text, not the error: its traceback would hold this frame
    if "depth" in first or "recursion" in first.lower():
        raise LineError(f"invalid JSON: nested too deep ({first})") from None
    try:
        value = json.loads(line.decode("utf-8", "replace"), parse_constant=_refuse_constant)
        text = json.dumps(value, ensure_ascii=False)
        return orjson.loads(_LONE_SURROGATE.sub("\ufffd", text).encode("utf-8"))
    except LineError:
        raise
    except (ValueError, RecursionError):
        raise LineError(f"invalid JSON: {first}") from None


def loads(line: bytes) -> Any:
    """A JSON line, or None if it cannot be read as one (for scans that only skip such lines)."""
    try:
        return decode_line(line)
    except LineError:
        return None


def lines(chunk: Chunk) -> Iterator[tuple[int, int, bytes]]:
    """(offset, index, line) for every line, blank ones too: a caller skips those (`blank`) and
    knows from the last index how many lines the chunk holds, without a second pass."""
    data = chunk.data
    pos = 0
    index = 0
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        end = n if nl < 0 else nl
        yield chunk.start + pos, index, data[pos:end]
        index += 1
        pos = end + 1


def blank(line: bytes) -> bool:
    return not line or line.isspace()


def last_line_span(data: bytes, start: int) -> tuple[int, bytes]:
    """Where the last complete line of `data` starts (as a file offset) and its bytes."""
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    begin = data.rfind(b"\n", 0, end) + 1  # bounded, not a copy of the chunk without its end
    return start + begin, data[begin:]
