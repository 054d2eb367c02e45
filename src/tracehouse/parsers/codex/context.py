"""What a rollout's rows need from beside the rollout: titles, prompt history, lineage.

Codex keeps these outside the rollout: thread names in `session_index.jsonl`, typed prompts in
`history.jsonl`, spawn edges in `state_*.sqlite`, and a review child's parent only as the
parent's `entered_review_mode` record stamped with the child's creation time. Each file is read
once per process and version (path, size, mtime), and the SQLite index through the kit's
private view of it.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from tracehouse.model import ids
from tracehouse.parsers.codex import records as rec
from tracehouse.parsers.kit.jsonl import blocks, loads
from tracehouse.parsers.kit.sqlite_snapshot import SnapshotError, read, snapshot

PROVIDER = rec.PROVIDER
Signature = tuple[str, int, int]


@dataclass(frozen=True)
class RolloutContext:
    path: str
    home: str  # the CODEX_HOME the rollout was found under
    thread: str | None  # the thread id in the file name
    # A review child's parent, by its creation time: looked up once per parse, not for each of
    # the prompt's attribution, the session row and its spawn link.
    _reviews: dict[str, tuple[str, int] | None] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    # The home's files, each stat-ed once per parse rather than for every prompt that asks
    # (3,000 stats and 1,400 globs for the bench corpus's 480 rollouts).
    @cached_property
    def _names(self) -> dict[str, str]:
        return _session_index(_signature(os.path.join(self.home, "session_index.jsonl")))

    @cached_property
    def _prompts(self) -> dict[str, dict[str, float]]:
        return _history(_signature(os.path.join(self.home, "history.jsonl")))

    @cached_property
    def _threads(self) -> ThreadIndex:
        return thread_index(self.home)

    def title(self, sid: str, renamed: str | None) -> str | None:
        """The name the user gave the thread (`session_index.jsonl`, else the rollout's own
        `thread_name_updated`), else the title the thread index keeps (often its first prompt)."""
        return self._names.get(sid) or renamed or self._threads.titles.get(sid)

    def history_prompts(self, sid: str) -> dict[str, float]:
        return self._prompts.get(sid, {})

    def parent_of(self, agg: Any) -> str | None:
        parent = agg.parent_thread
        if parent:
            return str(parent)
        sid = agg.thread_id or self.thread
        edges = self._threads.edges
        if sid and sid in edges:
            return edges[sid]
        review = self._review(agg)
        return review[0] if review else None

    def _review(self, agg: Any) -> tuple[str, int] | None:
        if rec.subagent_kind(agg.meta) != "review" or not agg.created_at:
            return None
        created = str(agg.created_at)
        if created not in self._reviews:
            self._reviews[created] = _review_parent(self.home, self.path, created)
        return self._reviews[created]

    def link_review(self, agg: Any, row: dict[str, Any]) -> None:
        """A review child names no parent: find the parent record stamped with its creation."""
        found = self._review(agg)
        if found is None:
            return
        parent, offset = found
        row["parent_session_id"] = ids.session_id(PROVIDER, parent)
        row["parent_source_session_id"] = parent
        row["spawn_tool_call_id"] = ids.tool_call_id(PROVIDER, parent, f"review:{offset}")
        row["spawn_source_tool_call_id"] = f"review:{offset}"


def _signature(path: str) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return (path, -1, -1)
    return (path, st.st_size, st.st_mtime_ns)


def _jsonl(path: str) -> list[dict[str, Any]]:
    found = []
    try:
        for chunk in blocks(path):
            for line in chunk.data.splitlines():
                record = loads(line) if line.strip() else None
                if isinstance(record, dict):
                    found.append(record)
    except OSError:
        pass  # what was read stands: these files only add titles and prompts
    return found


@lru_cache(maxsize=8)
def _session_index(sig: Signature) -> dict[str, str]:
    titles: dict[str, str] = {}
    for r in _jsonl(sig[0]):  # append-only: the last entry for a thread wins
        if isinstance(r.get("id"), str) and isinstance(r.get("thread_name"), str):
            titles[r["id"]] = r["thread_name"]
    return titles


@lru_cache(maxsize=8)
def _history(sig: Signature) -> dict[str, dict[str, float]]:
    prompts: dict[str, dict[str, float]] = {}
    for r in history_records(sig[0]):
        prompts.setdefault(r[0], {}).setdefault(r[2].strip(), r[1])
    return prompts


def history_records(path: str) -> list[tuple[str, float, str]]:
    """(thread id, unix seconds, text) of each well-formed history line."""
    found = []
    for r in _jsonl(path):
        sid = r.get("session_id") or r.get("conversation_id")
        if isinstance(sid, str) and isinstance(r.get("text"), str):
            ts = r.get("ts")
            found.append((sid, float(ts) if isinstance(ts, (int, float)) else 0.0, r["text"]))
    return found


@dataclass(frozen=True)
class ThreadIndex:
    """What `state_*.sqlite` knows of threads: child → parent thread, thread → title."""

    edges: dict[str, str]
    titles: dict[str, str]


def thread_index(home: str) -> ThreadIndex:
    """Every thread index database in the home, merged (newer numbered files last)."""
    edges: dict[str, str] = {}
    titles: dict[str, str] = {}
    for folder in (home, os.path.join(home, "sqlite")):
        for db in sorted(Path(folder).glob("state_*.sqlite")):
            found = _thread_index(_signature(str(db)), _signature(f"{db}-wal"))
            edges.update(found.edges)
            titles.update(found.titles)
    return ThreadIndex(edges, titles)


@lru_cache(maxsize=8)
def _thread_index(db: Signature, wal: Signature) -> ThreadIndex:
    """Read from the kit's private view of the live database (`kit.sqlite_snapshot`). An
    older index without these tables says nothing; one that cannot be read at all (not a
    database) leaves its threads' lineage and titles to the rollouts themselves."""
    try:
        with snapshot(db[0]) as conn:
            edges = read(conn, "SELECT child_thread_id, parent_thread_id FROM thread_spawn_edges")
            titles = read(conn, "SELECT id, title FROM threads WHERE title != ''")
    except (SnapshotError, sqlite3.DatabaseError):
        edges, titles = [], []
    return ThreadIndex(
        {str(child): str(parent) for child, parent in edges if child and parent},
        {str(thread): str(title) for thread, title in titles if thread and title},
    )


def _review_parent(home: str, child: str, created_at: str) -> tuple[str, int] | None:
    """The rollout (thread id) and offset of the `entered_review_mode` record of the review
    that made the child: the one stamped with the child's creation time, else the one whose
    window (from `entered_review_mode` to `exited_review_mode`, or to the rollout's end while
    the review runs) holds that time, the latest to open where several do. Rollouts in path
    order. Each rollout's review records are read once per version of it, not once per review
    child: a home with R review children and N rollouts read N files R times."""
    inside: list[tuple[str, str, int]] = []  # (opened at, parent, offset)
    for path in rollout_paths(home):
        if path == child:
            continue
        stamps, windows = _reviews_of(*_signature(path))
        parent = rec.thread_id_of(os.path.basename(path))
        if parent is None:
            continue
        offset = stamps.get(created_at)
        if offset is not None:
            return parent, offset
        for opened, closed, at in windows:
            if opened <= created_at and (closed is None or created_at <= closed):
                inside.append((opened, parent, at))
    if not inside:
        return None
    _, parent, offset = max(inside)
    return parent, offset


_REVIEW = b'"entered_review_mode"'
_REVIEW_END = b'"exited_review_mode"'
_TIMESTAMP = b'"timestamp":"'
Window = tuple[str, str | None, int]  # (opened at, closed at, offset of the opening line)


@lru_cache(maxsize=4096)
def _reviews_of(path: str, size: int, _mtime: int) -> tuple[dict[str, int], list[Window]]:
    """A rollout's reviews: each `"timestamp"` string an `entered_review_mode` line holds → the
    offset of the line (the first line, where two share one), and each review's window."""
    found: dict[str, int] = {}
    windows: list[Window] = []
    if size < 0:
        return found, windows
    try:
        for chunk in blocks(path):
            _review_stamps(chunk.data, chunk.start, found, windows)
    except OSError:
        pass  # what was read stands: a review's parent is then not found
    return found, windows


def _review_stamps(data: bytes, offset: int, found: dict[str, int], windows: list[Window]) -> None:
    for start, end, closing in _review_lines(data):
        stamps = _stamps(data, start, end)
        if closing:
            if windows and windows[-1][1] is None and stamps:
                windows[-1] = (windows[-1][0], stamps[0], windows[-1][2])
            continue
        for stamp in stamps:
            found.setdefault(stamp, offset + start)
        if stamps:
            windows.append((stamps[0], None, offset + start))


def _review_lines(data: bytes) -> list[tuple[int, int, bool]]:
    """(start, end, whether it closes a review) of each review line, in order."""
    lines = []
    for marker, closing in ((_REVIEW, False), (_REVIEW_END, True)):
        at = data.find(marker)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = end if end >= 0 else len(data)
            lines.append((start, end, closing))
            at = data.find(marker, end)
    return sorted(lines)


def _stamps(data: bytes, start: int, end: int) -> list[str]:
    """Every `"timestamp"` string of a line, the envelope's first."""
    out = []
    stamp = data.find(_TIMESTAMP, start, end)
    while stamp >= 0:
        value = stamp + len(_TIMESTAMP)
        close = data.find(b'"', value, end)
        if close < 0:
            break
        out.append(data[value:close].decode("utf-8", "replace"))
        stamp = data.find(_TIMESTAMP, close, end)
    return out


def rollout_paths(home: str) -> list[str]:
    found: list[str] = []
    for folder in ("sessions", "archived_sessions"):
        for dirpath, _dirs, files in os.walk(os.path.join(home, folder)):
            found.extend(
                os.path.join(dirpath, f)
                for f in files
                if f.startswith("rollout-") and f.endswith((".jsonl", ".json"))
            )
    return sorted(found)
