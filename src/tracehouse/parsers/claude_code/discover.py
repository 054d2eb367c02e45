"""Where Claude Code keeps transcripts, and which file is which session (FORMATS §1.1).

Roots are config dirs (holding `projects/`) or `projects/` dirs themselves. Under a project dir:
`<sessionId>.jsonl` is a session; `agent-<id>.jsonl` beside it is a v2.0 subagent; and
`<sessionId>/subagents/**/agent-<id>.jsonl` (v2.1.2+, with an optional `.meta.json`, and
workflow runs under `subagents/workflows/<runId>/`) are subagents of that session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracehouse.parsers.base import Unit

PROVIDER = "claude-code"


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    roots = [home / ".claude"]
    xdg = env.get("XDG_CONFIG_HOME")
    roots.append(Path(xdg) / "claude" if xdg else home / ".config" / "claude")
    for part in env.get("CLAUDE_CONFIG_DIR", "").split(","):
        if part.strip():
            roots.append(Path(part.strip()).expanduser())
    return roots


def projects_dir(root: Path) -> Path | None:
    if (root / "projects").is_dir():
        return root / "projects"
    if root.name == "projects" and root.is_dir():
        return root
    return None


def discover(roots: list[Path]) -> list[Unit]:
    units: dict[str, Unit] = {}
    for root in roots:
        projects = projects_dir(root)
        if projects is None:
            continue
        for project in sorted(_subdirs(projects)):
            for unit in _project_units(project, str(root)):
                units.setdefault(unit.key, unit)  # the same dir reached through two roots
    return sorted(units.values(), key=lambda u: u.key)


def _subdirs(path: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(path) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _project_units(project: Path, root: str) -> list[Unit]:
    out: list[Unit] = []
    try:
        entries = list(os.scandir(project))
    except OSError:
        return out
    for entry in entries:
        name = entry.name
        if entry.is_file() and name.endswith(".jsonl"):
            stem = name[: -len(".jsonl")]
            if stem.startswith("agent-"):
                out.append(_unit(entry.path, root, project.name, agent_id=stem[6:], via="Task"))
            else:
                out.append(_unit(entry.path, root, project.name, session=stem))
        elif entry.is_dir(follow_symlinks=False):
            subagents = Path(entry.path) / "subagents"
            if subagents.is_dir():
                out.extend(_subagent_units(subagents, root, project.name, parent=name))
    return out


def _subagent_units(subagents: Path, root: str, project: str, parent: str) -> list[Unit]:
    out = []
    for dirpath, _dirs, files in os.walk(subagents):
        workflow = "workflows" in Path(dirpath).relative_to(subagents).parts
        for name in files:
            if name.startswith("agent-") and name.endswith(".jsonl"):
                path = Path(dirpath) / name
                meta = _read_meta(path.with_suffix(".meta.json"))
                out.append(
                    _unit(
                        str(path),
                        root,
                        project,
                        agent_id=name[6:-6],
                        parent=parent,
                        via="workflow" if workflow else "Task",
                        meta=meta,
                    )
                )
    return out


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        value = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def _unit(path: str, root: str, project: str, **info: Any) -> Unit:
    info["project"] = project
    # Keys are absolute and normalized (no `..`), but symlinks are kept as the user named them.
    key = os.path.abspath(path)
    return Unit(PROVIDER, key, Path(key), os.path.abspath(root), info)
