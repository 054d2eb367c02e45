"""Where the Cursor agent keeps its conversations, and which unit is which (README.md here).

A root is a `.cursor` directory (`~/.cursor`). Two stores:

* `projects/<slug>/agent-transcripts/`: one conversation per uuid, as `<uuid>.txt`, `<uuid>.json`,
  `<uuid>.jsonl` or `<uuid>/<uuid>.jsonl` — twins of one uuid are one unit, keyed
  `agent-transcripts/<uuid>` — and each subagent's `<uuid>/subagents/<id>.jsonl`, a unit of its
  own. `<slug>` is the workspace path with separators as `-` (or a window's ms timestamp).
* `chats/<md5(workspace path)>/<agentId>/store.db`: the CLI's resumable store, one unit each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracehouse.parsers.base import Unit, entries, files_digest, present, within
from tracehouse.parsers.kit.sqlite_snapshot import signature

PROVIDER = "cursor-agent"
TRANSCRIPTS = "agent-transcripts"
FORMS = (".txt", ".json", ".jsonl")


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    return [home / ".cursor"]


def watch_roots(roots: list[Path]) -> list[Path]:
    return [root for root in roots]


def discover(roots: list[Path]) -> list[Unit]:
    units: dict[str, Unit] = {}
    for root in roots:
        top = os.path.abspath(root)
        for project in _list(os.path.join(top, "projects"), top, units):
            folder = os.path.join(project.path, TRANSCRIPTS)
            for entry in _list(folder, top, units) if project.is_dir() else ():
                for unit in _units(top, project.name, entry.path, entry.is_dir(), units):
                    units.setdefault(unit.key, unit)
        for workspace in _list(os.path.join(top, "chats"), top, units):
            for agent in _list(workspace.path, top, units) if workspace.is_dir() else ():
                store = os.path.join(agent.path, "store.db")
                if present(store):
                    units.setdefault(store, _store(store, top, workspace.name))
    return sorted(units.values(), key=lambda u: u.key)


def unit_for(path: str, roots: list[Path]) -> Unit | None:
    path = os.path.abspath(path)
    for top, rel in within(path, roots):
        if rel[0] == "chats" and len(rel) == 4 and rel[3].startswith("store.db"):
            store = os.path.join(top, *rel[:3], "store.db")
            return _store(store, top, rel[1]) if present(store) else None
        if rel[0] == "projects" and len(rel) >= 4 and rel[2] == TRANSCRIPTS:
            folder = os.path.join(top, *rel[:3])
            head = os.path.join(folder, rel[3])
            if len(rel) == 4:
                return next(iter(_units(top, rel[1], head, os.path.isdir(head), {})), None)
            if len(rel) == 5 and rel[4].endswith(".jsonl"):
                return _transcript(os.path.join(folder, rel[3]), top, rel[1])
            if len(rel) == 6 and rel[4] == "subagents" and rel[5].endswith(".jsonl"):
                return Unit(PROVIDER, path, top, {"kind": "subagent", "parent": rel[3],
                                                  "slug": rel[1]})  # fmt: skip
    return None


def members(key: str) -> list[str]:
    """The files of a transcript unit that exist: its twins and its nested JSONL."""
    uuid = os.path.basename(key)
    found = [key + form for form in FORMS] + [os.path.join(key, uuid + ".jsonl")]
    return [path for path in found if os.path.isfile(path)]


def subagents(key: str) -> list[str]:
    """A transcript's subagent files, in the order they were written."""
    folder = os.path.join(key, "subagents")
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".jsonl") and e.is_file()]
    except OSError:
        return []
    return [e.path for e in sorted(entries, key=lambda e: (e.stat().st_mtime_ns, e.name))]


def _units(top: str, slug: str, path: str, is_dir: bool, unreadable: dict[str, Unit]) -> list[Unit]:
    name = os.path.basename(path)
    if not is_dir:
        stem, ext = os.path.splitext(name)
        return [_transcript(path[: -len(ext)], top, slug)] if ext in FORMS and stem else []
    out = [_transcript(path, top, slug)] if members(path) else []
    for child in _list(os.path.join(path, "subagents"), top, unreadable):
        if child.name.endswith(".jsonl"):
            info = {"kind": "subagent", "parent": name, "slug": slug}
            out.append(Unit(PROVIDER, child.path, top, info))
    return out


def _transcript(key: str, top: str, slug: str) -> Unit:
    return Unit(PROVIDER, key, top, {"kind": "transcript", "slug": slug})


def _store(path: str, top: str, cwd_md5: str) -> Unit:
    return Unit(PROVIDER, path, top, {"kind": "store", "cwd_md5": cwd_md5})


def _list(path: str, root: str, unreadable: dict[str, Unit]) -> list[os.DirEntry[str]]:
    return entries(PROVIDER, path, root, unreadable)


def plan_unit(unit: Unit, cursor: Mapping[str, Any] | None, full: bool) -> int | None:
    """Bytes a parse may read, or None when no stat of the unit's files changed (here, not
    with the reader: a sync plans from discovery alone)."""
    files = unit_files(unit)
    if not any(files.values()):
        return None  # vanished since discovery: the next run flags it missing
    if full or not cursor or cursor.get("missing") or cursor.get("files") != files_digest(files):
        return sum(f[1] for f in files.values() if f)
    return None


def unit_files(unit: Unit) -> dict[str, list[int] | None]:
    """A stat of each file the unit is read from: a transcript's twins and its subagents, or
    a store's database and its `-wal` / `-journal`."""
    if unit.info.get("kind") == "store":
        return signature(unit.key)
    paths = [unit.key] if unit.info.get("kind") == "subagent" else members(unit.key)
    if unit.info.get("kind") == "transcript":
        paths += subagents(unit.key)  # a new child changes which calls spawned whom
    out: dict[str, list[int] | None] = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out[path] = [st.st_ino, st.st_size, st.st_mtime_ns]
    return out
