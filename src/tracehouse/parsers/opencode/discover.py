"""Where OpenCode keeps its sessions, and which unit each belongs to (README.md here).

A root is OpenCode's data directory (`$XDG_DATA_HOME/opencode`, default
`~/.local/share/opencode`, on every OS). It may hold all three generations at once:

* Gen 2 (1.2 on): `opencode.db` or `opencode-<channel>.db` — one unit per database, read through
  a private snapshot (its newest rows are often only in the `-wal`);
* Gen 1 (1.0–1.1): `storage/session/<projectID>/<ses>.json`, its messages in
  `storage/message/<ses>/` and their parts in `storage/part/<msg>/` — one unit per session file;
* Gen 0 (0.x): `project/<project>/storage/session/info/<ses>.json`, messages in
  `…/session/message/<ses>/`, parts in `…/session/part/<ses>/<msg>/` — one unit per session file.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracehouse.parsers.base import Unit, file_stat, files_digest, plan_files, within
from tracehouse.parsers.kit.database import plan_database
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.layout import Layout

PROVIDER = "opencode"
DATABASE = re.compile(r"^opencode(-[\w.-]+)?\.db$")
SESSION_FILE = re.compile(r"^ses_\w+\.json$")
MESSAGES_0 = (["storage", "session", "message"], ["storage", "session", "part"])


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    data = env.get("XDG_DATA_HOME")
    return [Path(data).expanduser() / "opencode" if data else home / ".local/share/opencode"]


def _info(top: str, parts: list[str]) -> dict[str, Any] | None:
    if len(parts) == 1:
        return {"kind": "db"} if DATABASE.match(parts[0]) else None
    if not SESSION_FILE.match(parts[-1]):
        return None
    return {"kind": "json", "generation": 0 if parts[0] == "project" else 1}


LAYOUT = Layout(PROVIDER, ("opencode*.db", "storage/session/*/ses_*.json",
                           "project/*/storage/session/info/ses_*.json"), _info)  # fmt: skip
discover, watch_roots = LAYOUT.discover, LAYOUT.watch_roots


def unit_for(path: str, roots: list[Path]) -> Unit | None:
    """The unit a changed file belongs to: a database (or its `-wal`), a session file, or the
    session file of a message or part file."""
    unit = LAYOUT.unit_for(path, roots)
    if unit is None and (session := _session_file(path, roots)) is not None:
        return LAYOUT.unit_for(session, roots)
    return unit


def _session_file(path: str, roots: list[Path]) -> str | None:
    """The session file a message or part file belongs to, where it is there."""
    for top, rel in within(path, roots):
        if rel[0] == "storage" and len(rel) == 4 and rel[1] in ("message", "part"):
            session = rel[2] if rel[1] == "message" else _part_session(os.path.abspath(path))
            storage = glob.escape(os.path.join(top, "storage"))
            files = glob.glob(os.path.join(storage, "session", "*", f"{session}.json"))
            return files[0] if files and session.startswith("ses_") else None
        if rel[0] == "project" and len(rel) >= 6 and rel[2:5] in MESSAGES_0:
            info = os.path.join(top, *rel[:4], "info", f"{rel[5]}.json")
            return info if os.path.isfile(info) else None
    return None


def _part_session(path: str) -> str:
    """Parts are filed by message only; the part names its session."""
    try:
        return str(orjson.loads(read_file(path)).get("sessionID") or "")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return ""


def plan_unit(unit: Unit, cursor: Mapping[str, Any] | None, full: bool) -> int | None:
    """Bytes a parse may read, or None when no stat of the unit's files changed (here, not
    with the reader: a sync plans from discovery alone)."""
    if unit.info.get("kind") == "db":
        return plan_database(unit, cursor, full)
    files = json_signature(unit)
    if files.get(unit.key) is None:
        return None  # vanished since discovery: the next run flags it missing
    return plan_files(files, cursor, full, files_digest(files))


def json_signature(unit: Unit) -> dict[str, list[int] | None]:
    """A stat of the session file and of every message and part file of the session."""
    out: dict[str, list[int] | None] = {}
    sid = os.path.basename(unit.key).removesuffix(".json")
    if unit.info.get("generation") == 0:
        base = os.path.dirname(os.path.dirname(unit.key))
        message_dir = os.path.join(base, "message", sid)
        part_root = os.path.join(base, "part", sid)
    else:
        storage = os.path.dirname(os.path.dirname(os.path.dirname(unit.key)))
        message_dir = os.path.join(storage, "message", sid)
        part_root = os.path.join(storage, "part")
    out[unit.key] = file_stat(unit.key)
    for name in _names(message_dir):
        out[name] = file_stat(os.path.join(message_dir, name))
        part_dir = os.path.join(part_root, name.removesuffix(".json"))
        for part in _names(part_dir):
            out[f"{name}/{part}"] = file_stat(os.path.join(part_dir, part))
    return out


def _names(directory: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return []
