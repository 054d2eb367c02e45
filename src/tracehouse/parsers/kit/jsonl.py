"""Reading the complete lines of an append-only JSONL file from an offset (DESIGN §5)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

READ_BLOCK = 4 * 1024 * 1024
# A line longer than this is never held whole (`max_line_bytes` in the settings).
MAX_LINE = 64 * 1024 * 1024


@dataclass(frozen=True)
class Chunk:
    data: bytes  # complete lines only
    start: int
    end: int  # offset just past the last consumed line
    eof: bool  # everything up to the stat size was consumed
    # A line over the size limit, skipped unread: its size (0: none), and its last bytes (what
    # the cursor's tail hash covers, so that an append is verified without reading it again).
    skipped: int = 0
    tail: bytes = b""


def read_chunk(
    f: BinaryIO,
    start: int,
    limit: int,
    budget: int,
    *,
    final_line_complete: bool,
    max_line: int = MAX_LINE,
) -> Chunk:
    """Bytes [start, end) ending on a newline, about `budget` long (longer for one long line).

    `limit` is the size seen by stat: bytes written after it wait for the next pass. A last line
    without a newline is taken only when `final_line_complete` (the file is quiet) and it parses.
    A first line longer than `max_line` is never held: it comes back as `skipped`, with no data.
    """
    f.seek(start)
    first = f.read(max(0, min(budget, limit - start)))
    parts, size, found = [first], len(first), b"\n" in first
    while not found and start + size < limit and size <= max_line:
        more = f.read(min(READ_BLOCK, limit - start - size, max_line + 1 - size))
        if not more:
            break
        parts.append(more)
        size += len(more)
        found = b"\n" in more
    if not found and size > max_line:
        return _skip_line(f, start, start + size, limit, final_line_complete)
    data = first if len(parts) == 1 else b"".join(parts)
    reached_limit = start + len(data) >= limit
    cut = data.rfind(b"\n") + 1
    if reached_limit and cut < len(data) and final_line_complete and _parses(data[cut:]):
        cut = len(data)
    return Chunk(data[:cut], start, start + cut, reached_limit and cut == len(data))


TAIL = 4096


def _skip_line(f: BinaryIO, start: int, pos: int, limit: int, final_line_complete: bool) -> Chunk:
    """The line at `start`, read up to `pos` without a newline, scanned on to its end block by
    block and dropped. One still being written (no newline, the file not quiet) waits."""
    f.seek(pos)
    ended = False
    while pos < limit and not ended:
        block = f.read(min(READ_BLOCK, limit - pos))
        if not block:
            break
        nl = block.find(b"\n")
        ended = nl >= 0
        pos += nl + 1 if ended else len(block)
    if not ended and not final_line_complete:
        return Chunk(b"", start, start, False)
    size = pos - start
    f.seek(pos - min(TAIL, size))
    return Chunk(b"", start, pos, pos >= limit, skipped=size, tail=f.read(min(TAIL, size)))


def blocks(path: str, max_line: int = MAX_LINE) -> Iterator[Chunk]:
    """A whole file as chunks of complete lines, for the scans a parser makes of files other
    than its unit (a parent transcript's ids, a thread index): memory stays within a block and
    `max_line`, and a longer line is left out as its own parse rejects it. OSError propagates."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        pos = 0
        while pos < size:
            chunk = read_chunk(f, pos, size, READ_BLOCK, final_line_complete=True,
                               max_line=max_line)  # fmt: skip
            if chunk.end <= pos:
                return  # a last line cut short: nothing more is whole
            if chunk.data:
                yield chunk
            pos = chunk.end


class TooLarge(OSError):
    """A file read whole that is larger than a line may be: an OSError, so that every reader
    that reports an unreadable file reports this one the same way."""


def read_file(path: str, limit: int = MAX_LINE) -> bytes:
    """A small file's bytes (a sidecar, a document); TooLarge past `limit`, never read."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise TooLarge(f"{size:,} bytes, over the {limit:,}-byte limit (max_line_bytes)")
        return f.read()


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
