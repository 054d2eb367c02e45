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

from tracehouse.parsers.base import Unit, entries, files_digest, present, within
from tracehouse.parsers.kit.database import plan_database
from tracehouse.parsers.kit.jsonl import read_file

PROVIDER = "opencode"
DATABASE = re.compile(r"^opencode(-[\w.-]+)?\.db$")
SESSION_FILE = re.compile(r"^ses_\w+\.json$")


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    data = env.get("XDG_DATA_HOME")
    return [Path(data).expanduser() / "opencode" if data else home / ".local/share/opencode"]


def watch_roots(roots: list[Path]) -> list[Path]:
    return list(roots)


def discover(roots: list[Path]) -> list[Unit]:
    units: dict[str, Unit] = {}
    for root in roots:
        top = os.path.abspath(root)
        for entry in _list(top, top, units):
            if DATABASE.match(entry.name) and present(entry.path):
                units.setdefault(entry.path, Unit(PROVIDER, entry.path, top, {"kind": "db"}))
        sessions = os.path.join(top, "storage", "session")
        for project in _list(sessions, top, units):
            if project.is_dir(follow_symlinks=False):
                for entry in _list(project.path, top, units):
                    if SESSION_FILE.match(entry.name):
                        units.setdefault(entry.path, _json_unit(entry.path, top, 1))
        for project in _list(os.path.join(top, "project"), top, units):
            info = os.path.join(project.path, "storage", "session", "info")
            for entry in _list(info, top, units) if project.is_dir() else ():
                if SESSION_FILE.match(entry.name):
                    units.setdefault(entry.path, _json_unit(entry.path, top, 0))
    return sorted(units.values(), key=lambda u: u.key)


def unit_for(path: str, roots: list[Path]) -> Unit | None:
    """The unit a changed file belongs to: a database (or its `-wal`), a session file, or the
    session of a message or part file."""
    path = os.path.abspath(path)
    for top, rel in within(path, roots):
        name = rel[0].removesuffix("-wal").removesuffix("-journal")
        if len(rel) == 1 and DATABASE.match(name):
            return Unit(PROVIDER, os.path.join(top, name), top, {"kind": "db"})
        if rel[0] == "storage" and len(rel) >= 3:
            return _gen1_unit(top, rel[1:], path)
        if rel[0] == "project" and len(rel) >= 6 and rel[2:4] == ["storage", "session"]:
            base = os.path.join(top, *rel[:4])
            session = rel[5] if rel[4] in ("message", "part") else rel[5].removesuffix(".json")
            found = os.path.join(base, "info", f"{session}.json")
            return _json_unit(found, top, 0) if os.path.isfile(found) else None
    return None


def _gen1_unit(top: str, rel: list[str], path: str) -> Unit | None:
    storage = os.path.join(top, "storage")
    if rel[0] == "session" and len(rel) == 3 and SESSION_FILE.match(rel[2]):
        return _json_unit(path, top, 1)
    if rel[0] == "message" and len(rel) == 3:
        session = rel[1]
    elif rel[0] == "part" and len(rel) == 3:
        try:  # parts are filed by message only; the part names its session
            session = str(orjson.loads(read_file(path)).get("sessionID") or "")
        except (OSError, orjson.JSONDecodeError, AttributeError):
            return None
    else:
        return None
    if not session.startswith("ses_"):
        return None
    found = glob.glob(os.path.join(glob.escape(storage), "session", "*", f"{session}.json"))
    return _json_unit(found[0], top, 1) if found else None


def _json_unit(path: str, root: str, generation: int) -> Unit:
    return Unit(PROVIDER, path, root, {"kind": "json", "generation": generation})


def _list(path: str, root: str, unreadable: dict[str, Unit]) -> list[os.DirEntry[str]]:
    return entries(PROVIDER, path, root, unreadable)


def plan_unit(unit: Unit, cursor: Mapping[str, Any] | None, full: bool) -> int | None:
    """Bytes a parse may read, or None when no stat of the unit's files changed (here, not
    with the reader: a sync plans from discovery alone)."""
    if unit.info.get("kind") == "db":
        return plan_database(unit, cursor, full)
    files = json_signature(unit)
    if files.get(unit.key) is None:
        return None  # vanished since discovery: the next run flags it missing
    if full or not cursor or cursor.get("missing") or cursor.get("files") != files_digest(files):
        return sum(f[1] for f in files.values() if f)
    return None


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
    out[unit.key] = _stat(unit.key)
    for name in _names(message_dir):
        out[name] = _stat(os.path.join(message_dir, name))
        part_dir = os.path.join(part_root, name.removesuffix(".json"))
        for part in _names(part_dir):
            out[f"{name}/{part}"] = _stat(os.path.join(part_dir, part))
    return out


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _names(directory: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return []
