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

import orjson

from tracehouse.parsers.base import Unit, entries, present, within
from tracehouse.parsers.jsonl import read_file

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
