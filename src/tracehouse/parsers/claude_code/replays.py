"""Lines one transcript copies from another (FORMATS §1.6, §1.8), found from the files on disk.

* A resumed session's file starts by replaying an earlier session's conversation, line for line
  with the same uuids. Every session file of a project is indexed by its root: the uuid and
  timestamp of its first conversational line. A file whose root is also the root of an earlier
  session (earlier first timestamp, then file name) replays it; lines whose uuid appears in such
  an earlier file belong to the earliest one and are skipped here.
* A side-question sidechain (`aside_question`) copies its parent's lines with the same uuids,
  its assistant messages sometimes with new request ids: a subagent's line whose uuid is a line
  of its parent's file, or whose assistant `message.id` appears there, is skipped. What the
  subagent says after them links to nothing before it (a link may not leave its session).
  The parent's `agent_progress` records, which mirror a running subagent, do not count: the
  subagent's own file is the original.

The answer depends only on which files exist, never on what was imported before, so import
order does not matter. Scans are cached per process by (path, size, mtime).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from tracehouse.model import ids
from tracehouse.parsers.kit.jsonl import blocks

HEAD_BYTES = 1024 * 1024  # a first line carrying an image can be this long
HEAD_STEP = 16 * 1024
_UUID = re.compile(rb'"uuid":\s*"([^"]+)"')
_MESSAGE_ID = re.compile(rb'"id":\s*"(msg_[^"]+)"')
_MIRROR = b'"agent_progress"'
_CONVERSATIONAL = (
    b'"type":"user"',
    b'"type":"assistant"',
    b'"type": "user"',
    b'"type": "assistant"',
)


PROVIDER = "claude-code"


@dataclass(frozen=True)
class Replays:
    """What a unit must skip: uuids owned by earlier sessions, message ids its parent holds."""

    owners: dict[str, str]  # line uuid → source session id of the session that owns it
    parent_messages: frozenset[str]
    parent: str | None = None
    parent_lines: frozenset[str] = frozenset()  # a subagent's parent's own line uuids

    def owner_message(self, r: dict[str, Any], uuid: str) -> str | None:
        """The id of the message this line is a copy of, in the session that owns it."""
        found = r.get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        message_id = message.get("id") if r.get("type") == "assistant" else None
        owner = self.owners.get(uuid)
        if owner is not None:
            return ids.message_id(PROVIDER, owner, f"msg:{message_id}" if message_id else uuid)
        if self.parent and (message_id in self.parent_messages or uuid in self.parent_lines):
            key = f"msg:{message_id}" if message_id else uuid
            return ids.message_id(PROVIDER, self.parent, key)
        return None


NONE = Replays({}, frozenset())


def for_unit(path: str, session: str, parent: str | None) -> Replays:
    """For a main session file (`parent` None) or a subagent of `parent`."""
    if parent is None:
        return for_session(path, session)
    marker = f"{os.sep}{parent}{os.sep}subagents{os.sep}"
    # v2.1: <project>/<parent>/subagents/**/agent-*.jsonl; v2.0: beside the parent's file
    project = path.split(marker)[0] if marker in path else os.path.dirname(path)
    return for_subagent(project, parent)


def for_session(path: str, session: str) -> Replays:
    """Replays in a main session file: the uuids of earlier sessions that share its root."""
    project = os.path.dirname(path)
    roots = _project_roots(project)
    mine = roots.get(session) or _root(path)
    if mine is None:
        return NONE
    earlier = sorted(
        (first, other)
        for other, (root, first) in roots.items()
        if other != session and root == mine[0] and (first, other) < (mine[1], session)
    )
    owners: dict[str, str] = {}
    for _first, other in reversed(earlier):  # the earliest session wins, so it is applied last
        for uuid in _uuids(os.path.join(project, f"{other}.jsonl")):
            owners[uuid] = other
    return Replays(owners, frozenset())


def for_subagent(project_dir: str, parent_session: str | None) -> Replays:
    """Replays in a subagent file: the assistant message ids its parent's file already holds."""
    if not parent_session:
        return NONE
    path = os.path.join(project_dir, f"{parent_session}.jsonl")
    return Replays({}, _message_ids(path), parent_session, _own_uuids(path))


# project dir → (its mtime, session → root, session → path of the files without a root yet)
_PROJECTS: dict[str, tuple[int, dict[str, tuple[str, str]], dict[str, str]]] = {}


def _project_roots(project: str) -> dict[str, tuple[str, str]]:
    """session → (root uuid, first timestamp) for every session file of a project directory.

    Cached per process while the directory is unchanged. Files without a root yet (empty, or
    summaries only; the watcher can see a file before its first line) are looked at again on
    every call, through a cache keyed by their size and mtime.
    """
    stamp = _dir_stamp(project)
    cached = _PROJECTS.get(project)
    if cached is None or cached[0] != stamp:
        roots: dict[str, tuple[str, str]] = {}
        rootless: dict[str, str] = {}
        for entry in _scandir(project):
            name = entry.name
            if name.endswith(".jsonl") and not name.startswith("agent-") and _is_file(entry):
                rootless[name[: -len(".jsonl")]] = entry.path
        if len(_PROJECTS) >= 256:
            _PROJECTS.clear()
        _PROJECTS[project] = (stamp, roots, rootless)
    else:
        _stamp, roots, rootless = cached
    for session, path in list(rootless.items()):
        try:
            st = os.stat(path)
        except OSError:
            continue
        root = _root_at(path, st.st_size, st.st_mtime_ns)
        if root is not None:
            roots[session] = root
            del rootless[session]
    return roots


def _dir_stamp(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


@lru_cache(maxsize=8192)
def _root_at(path: str, _size: int, _mtime: int) -> tuple[str, str] | None:
    return _root(path)


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a symlink loop: discovery makes it a reject; no session here
        return False


def _scandir(path: str) -> list[os.DirEntry[str]]:
    try:
        return list(os.scandir(path))
    except OSError:
        return []


def _root(path: str) -> tuple[str, str] | None:
    """(uuid, timestamp) of the first conversational line, reading the head in small steps."""
    try:
        with open(path, "rb") as f:
            buffer = b""
            while len(buffer) < HEAD_BYTES:
                block = f.read(HEAD_STEP)
                if not block:
                    break
                buffer += block
                lines = buffer.split(b"\n")
                for line in lines[:-1]:
                    found = _root_of(line)
                    if found is not None:
                        return found
                buffer = lines[-1]  # an incomplete line waits for the next block
    except OSError:
        return None
    return None


def _root_of(line: bytes) -> tuple[str, str] | None:
    if not any(marker in line for marker in _CONVERSATIONAL):
        return None
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    uuid, ts = record.get("uuid"), record.get("timestamp")
    if isinstance(uuid, str) and isinstance(ts, str):
        return uuid, ts
    return None


def _uuids(path: str) -> frozenset[str]:
    return _scan(path, *_stat(path), _UUID)


def _message_ids(path: str) -> frozenset[str]:
    return _own(path, *_stat(path), _MESSAGE_ID)


def _own_uuids(path: str) -> frozenset[str]:
    return _own(path, *_stat(path), _UUID)


@lru_cache(maxsize=64)
def _own(path: str, size: int, _mtime: int, pattern: re.Pattern[bytes]) -> frozenset[str]:
    """The assistant message ids (or line uuids) a transcript holds itself, not those it
    mirrors.

    2.1.x parents mirror a running subagent's messages as `progress` records
    (`data.type: "agent_progress"`) with the subagent's own ids and uuids: those copies are the
    subagent's, so they must not make the subagent's originals look like replays."""
    found: set[str] = set()
    for data in _read(path, size):
        if _MIRROR not in data:
            found.update(m.decode("utf-8", "replace") for m in pattern.findall(data))
            continue
        for line in data.split(b"\n"):
            if _MIRROR in line and is_agent_progress(line):
                continue
            found.update(m.decode("utf-8", "replace") for m in pattern.findall(line))
    return frozenset(found)


def is_agent_progress(line: bytes) -> bool:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    data = record.get("data") if isinstance(record, dict) else None
    return (
        record.get("type") == "progress"
        and isinstance(data, dict)
        and data.get("type") == "agent_progress"
    )


def _stat(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return st.st_size, st.st_mtime_ns


@lru_cache(maxsize=32)
def _scan(path: str, size: int, _mtime: int, pattern: re.Pattern[bytes]) -> frozenset[str]:
    return frozenset(
        m.decode("utf-8", "replace") for data in _read(path, size) for m in pattern.findall(data)
    )


def _read(path: str, size: int) -> Iterator[bytes]:
    """The file's complete lines, a block at a time (none over the line limit); nothing for a
    file that is gone (size -1), and no more once it cannot be read."""
    if size < 0:
        return
    try:
        for chunk in blocks(path):
            yield chunk.data
    except OSError:
        return
