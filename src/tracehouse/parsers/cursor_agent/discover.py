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

from tracehouse.parsers.base import Unit, file_stat, files_digest, plan_files
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.sqlite_snapshot import signature

PROVIDER = "cursor-agent"
TRANSCRIPTS = "agent-transcripts"
FORMS = (".txt", ".json", ".jsonl")


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    return [home / ".cursor"]


def _info(top: str, parts: list[str]) -> dict[str, Any] | None:
    if parts[0] == "chats":
        return {"kind": "store", "cwd_md5": parts[1]}
    if len(parts) == 6:
        return {"kind": "subagent", "parent": parts[3], "slug": parts[1]}
    if len(parts) == 5 and parts[4] != f"{parts[3]}.jsonl":
        return None  # only `<uuid>/<uuid>.jsonl` is the transcript of its folder
    return {"kind": "transcript", "slug": parts[1]}


def _transcript_key(path: str) -> str:
    """A transcript's twins (`<uuid>.txt`, `.json`, `.jsonl`, `<uuid>/<uuid>.jsonl`) are one
    unit, keyed `agent-transcripts/<uuid>`; a subagent's log and a store are their own."""
    parts = path.split(os.sep)
    if parts[-2] == TRANSCRIPTS:
        return os.path.splitext(path)[0]
    return os.path.dirname(path) if parts[-3] == TRANSCRIPTS else path


PATTERNS = (
    *(f"projects/*/{TRANSCRIPTS}/*{form}" for form in FORMS),
    f"projects/*/{TRANSCRIPTS}/*/*.jsonl",
    f"projects/*/{TRANSCRIPTS}/*/subagents/*.jsonl",
    "chats/*/*/store.db",
)
LAYOUT = Layout(PROVIDER, PATTERNS, _info, key=_transcript_key)
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots


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


def plan_unit(unit: Unit, cursor: Mapping[str, Any] | None, full: bool) -> int | None:
    """Bytes a parse may read, or None when no stat of the unit's files changed (here, not
    with the reader: a sync plans from discovery alone)."""
    files = unit_files(unit)
    if not any(files.values()):
        return None  # vanished since discovery: the next run flags it missing
    return plan_files(files, cursor, full, files_digest(files))


def unit_files(unit: Unit) -> dict[str, list[int] | None]:
    """A stat of each file the unit is read from: a transcript's twins and its subagents, or
    a store's database and its `-wal` / `-journal`."""
    if unit.info.get("kind") == "store":
        return signature(unit.key)
    paths = [unit.key] if unit.info.get("kind") == "subagent" else members(unit.key)
    if unit.info.get("kind") == "transcript":
        paths += subagents(unit.key)  # a new child changes which calls spawned whom
    found = {path: file_stat(path) for path in paths}
    return {path: stat for path, stat in found.items() if stat is not None}
