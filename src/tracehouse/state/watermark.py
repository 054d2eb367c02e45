"""Change detection for append-only files (DESIGN §5): what to read, decided from a stat.

A JSONL unit's cursor records the file's identity and how far it was consumed: (device, inode,
size, mtime_ns, offset of the end of the last complete line, hash of the first 4 KiB, hash of the
last complete line before the offset and where that line starts), plus the parser's resume state.
A unit whose parse also reads files beside its own (Claude Code's `.meta.json` of a subagent,
named in its `info["beside"]`) records their stamps too: when one changes, the unit is read whole
again, since what it says belongs to the whole session. Planning is pure: it takes what `os.stat`
said and, only when the file grew, the bytes needed to check the hashes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import xxhash

HEAD_BYTES = 4096


class Action(Enum):
    SKIP = "skip"  # nothing new: not even opened
    APPEND = "append"  # parse bytes [offset, last newline) with the saved resume state
    FULL = "full"  # parse the whole file from scratch
    WAIT = "wait"  # only a partial last line is new: come back when it is complete


@dataclass(frozen=True)
class FileCursor:
    dev: int
    ino: int
    size: int
    mtime_ns: int
    offset: int
    head_hash: str
    tail_start: int
    tail_hash: str
    state: Mapping[str, Any] = field(default_factory=dict)
    lines: int = 0  # complete lines before `offset`, so a reject can name its line number
    missing: bool = False
    beside: Mapping[str, list[int] | None] | None = None  # path → `stamp`, for `beside_changed`

    def to_json(self) -> dict[str, Any]:
        out = {
            "dev": self.dev,
            "ino": self.ino,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "offset": self.offset,
            "head_hash": self.head_hash,
            "tail_start": self.tail_start,
            "tail_hash": self.tail_hash,
            "state": dict(self.state),
            "lines": self.lines,
        }
        if self.missing:
            out["missing"] = True
        if self.beside is not None:
            out["beside"] = dict(self.beside)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FileCursor | None:
        try:
            return cls(
                dev=int(data["dev"]),
                ino=int(data["ino"]),
                size=int(data["size"]),
                mtime_ns=int(data["mtime_ns"]),
                offset=int(data["offset"]),
                head_hash=str(data["head_hash"]),
                tail_start=int(data["tail_start"]),
                tail_hash=str(data["tail_hash"]),
                state=data.get("state") or {},
                lines=int(data.get("lines", 0)),
                missing=bool(data.get("missing", False)),
                beside=data.get("beside"),
            )
        except (KeyError, TypeError, ValueError):
            return None  # an unreadable cursor only costs a full re-parse


def quick_plan(st: os.stat_result, cursor: Mapping[str, Any] | None) -> Action:
    """The decision a stat alone can make (from the stored cursor, as JSON); APPEND still needs
    `verify_append`. Planning runs for every unit of every run, so it reads the dict as it is."""
    if not cursor or cursor.get("missing"):
        return Action.FULL
    if (
        st.st_ino != cursor.get("ino")
        or st.st_dev != cursor.get("dev")
        or st.st_size < cursor.get("offset", 0)
    ):
        return Action.FULL  # replaced (new inode) or truncated
    if st.st_size == cursor.get("size") and st.st_mtime_ns == cursor.get("mtime_ns"):
        return Action.SKIP
    # Grown, or touched: `verify_append` checks that the consumed bytes are still the same.
    return Action.APPEND


def stamps(paths: list[str]) -> dict[str, list[int] | None]:
    """Size and mtime of each file beside a unit; None where there is none."""
    out: dict[str, list[int] | None] = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out[path] = None
        else:
            out[path] = [st.st_size, st.st_mtime_ns]
    return out


def beside_changed(paths: list[str], cursor: Mapping[str, Any] | None) -> bool:
    """Whether a file beside the unit changed since its cursor was written (a cursor from
    before they were recorded counts as changed: read whole once)."""
    return bool(paths) and cursor is not None and cursor.get("beside") != stamps(paths)


def verify_append(cursor: FileCursor, head: bytes, tail_line: bytes) -> bool:
    """The file still starts and continues as when it was read: appending is safe.

    `head` is the file's first HEAD_BYTES bytes now; `tail_line` the bytes now at
    [tail_start, offset), where the last consumed line was.
    """
    return (
        hash_bytes(head[: min(HEAD_BYTES, cursor.offset)]) == cursor.head_hash
        and hash_bytes(tail_line) == cursor.tail_hash
    )


def hash_bytes(data: bytes) -> str:
    return xxhash.xxh3_64_hexdigest(data)
