"""Where Gemini CLI keeps its chats, and which file is which session (README.md here).

A root is a `.gemini` directory (`~/.gemini`, or `$GEMINI_CLI_HOME/.gemini`). Each project has a
directory `tmp/<id>/`, `<id>` being `sha256(project root)` (before 2026-02) or a short slug (after);
one project may have several (a migration leaves both, Windows hashes `c:` and `C:` apart). Its
`chats/` holds `session-<YYYY-MM-DDTHH-MM>-<id head>.json` (to 0.38) or `.jsonl` (0.39 on), and a
subagent's chat in `chats/<parent sessionId>/<id>.json[l]`. `tmp/<id>/logs.json` is the project's
prompt log (`prompts.py`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

import orjson

from tracehouse.parsers.base import Unit, entries, present
from tracehouse.parsers.jsonl import read_file

PROVIDER = "gemini-cli"
SUFFIXES = (".json", ".jsonl")
MAIN_FILE = re.compile(r"^session-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2})-(.+)\.jsonl?$")


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    # GEMINI_CLI_HOME stands in for the home directory; `.gemini` is always beneath it.
    base = env.get("GEMINI_CLI_HOME")
    return [Path(base).expanduser() / ".gemini" if base else home / ".gemini"]


def watch_roots(roots: list[Path]) -> list[Path]:
    return [root / "tmp" if (root / "tmp").is_dir() else root for root in roots]


def discover(roots: list[Path]) -> list[Unit]:
    units: dict[str, Unit] = {}
    for root in roots:
        top = os.path.abspath(root)
        projects = _list(os.path.join(top, "tmp"), top, units)
        paths = _project_paths(top)
        for project in projects:
            if project.is_dir(follow_symlinks=False):
                for unit in _project_units(project.path, top, paths, units):
                    units.setdefault(unit.key, unit)
    return sorted(units.values(), key=lambda u: u.key)


def unit_for(path: str, roots: list[Path]) -> Unit | None:
    path = os.path.abspath(path)
    if not path.endswith(SUFFIXES):  # logs.json ends so too
        return None
    for root in roots:
        top = os.path.abspath(root)
        base = os.path.join(top, "tmp") + os.sep
        if not path.startswith(base):
            continue
        project = base + path[len(base) :].split(os.sep, 1)[0]
        for unit in _project_units(project, top, _project_paths(top), {}):
            if unit.key == path:
                return unit
    return None


def _project_units(
    project: str, root: str, paths: Mapping[str, str], unreadable: dict[str, Unit]
) -> list[Unit]:
    chats = os.path.join(project, "chats")
    workspace = _workspace(project, paths)
    out = []
    logs = os.path.join(project, "logs.json")
    if present(logs):  # the project's prompt log (prompts.py)
        out.append(Unit(PROVIDER, logs, root, {"workspace": workspace, "logs": True}))
    for entry in _list(chats, root, unreadable):
        if entry.name.endswith(SUFFIXES) and not entry.is_dir():
            out.append(_unit(entry.path, root, workspace, parent=None))
        elif entry.is_dir(follow_symlinks=False):
            # A subagent's chats, under its parent's sessionId (or a synthetic parent such as
            # `skill-extraction-<hex>`, which names no session).
            parent = None if entry.name.startswith("skill-extraction-") else entry.name
            for child in _list(entry.path, root, unreadable):
                if child.name.endswith(SUFFIXES) and not child.is_dir():
                    out.append(_unit(child.path, root, workspace, parent=parent, child=True))
    return out


def _unit(
    path: str, root: str, workspace: str | None, parent: str | None, child: bool = False
) -> Unit:
    info: dict[str, object] = {"workspace": workspace, "child": child}
    if parent is not None:
        info["parent"] = parent
    return Unit(PROVIDER, path, root, info)


def _project_paths(root: str) -> dict[str, str]:
    """Project directory name → the project's path, from what Gemini CLI wrote down: the slug
    registry `projects.json` and, for the older hash directories, the hash of each path in it."""
    try:
        registry = orjson.loads(read_file(os.path.join(root, "projects.json")))
    except (OSError, orjson.JSONDecodeError):
        return {}
    projects = registry.get("projects") if isinstance(registry, dict) else None
    found: dict[str, str] = {}
    for path, slug in (projects or {}).items() if isinstance(projects, dict) else ():
        if isinstance(path, str) and isinstance(slug, str):
            found[slug] = path
            found[hashlib.sha256(path.encode()).hexdigest()] = path
    return found


def _workspace(project: str, paths: Mapping[str, str]) -> str | None:
    """The project's path: its `.project_root` marker (slug directories), else the registry."""
    try:
        marked = Path(project, ".project_root").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        marked = ""
    return marked or paths.get(os.path.basename(project))


def _list(path: str, root: str, unreadable: dict[str, Unit]) -> list[os.DirEntry[str]]:
    return entries(PROVIDER, path, root, unreadable)
