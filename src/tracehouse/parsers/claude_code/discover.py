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

from tracehouse.parsers.base import Unit, unreadable_directory
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.untrusted import mapping

PROVIDER = "claude-code"
# A v2.1 subagent's sidecar, beside its transcript: the parse reads it, and a change to it alone
# (`finished`, written once the task ends, after its last line) has the transcript read again.
META = ".meta.json"


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
    """Every transcript under the roots. Plain strings and `os.scandir` throughout: a no-change
    sync of thousands of files is mostly this walk."""
    units: dict[str, Unit] = {}
    for root in roots:
        projects = projects_dir(root)
        if projects is None:
            continue
        top = os.path.abspath(root)
        listing = Listing(top)
        for project in listing.entries(os.path.abspath(projects)):
            if project.is_dir(follow_symlinks=False):
                for unit in _project_units(project.path, project.name, top, listing):
                    units.setdefault(unit.key, unit)  # the same dir reached through two roots
        for unit in listing.unreadable:
            units.setdefault(unit.key, unit)
    return sorted(units.values(), key=lambda u: u.key)


def watch_roots(roots: list[Path]) -> list[Path]:
    """What a watcher follows: each root's `projects/` (or the root until it has one)."""
    return [projects_dir(root) or root for root in roots]


def unit_for(path: str, roots: list[Path]) -> Unit | None:
    """The unit a changed path belongs to, if any: found by scanning only its project directory,
    with the same rules as `discover`; a subagent's sidecar belongs to its transcript."""
    path = os.path.abspath(path)
    if path.endswith(META):
        path = path[: -len(META)] + ".jsonl"
    for root in roots:
        projects = projects_dir(root)
        if projects is None:
            continue
        base = os.path.abspath(projects) + os.sep
        if not path.startswith(base) or not path.endswith(".jsonl"):
            continue
        project = path[len(base) :].split(os.sep, 1)[0]
        for unit in _project_units(base + project, project, os.path.abspath(root)):
            if unit.key == path:
                return unit
    return None


class Listing:
    """Directory listings under one root, keeping the directories that could not be read."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.unreadable: list[Unit] = []

    def entries(self, path: str) -> list[os.DirEntry[str]]:
        try:
            return list(os.scandir(path))
        except FileNotFoundError:
            return []  # gone since its parent was listed
        except OSError as exc:
            self.unreadable.append(unreadable_directory(PROVIDER, path, self.root, exc))
            return []


def _is_file(entry: os.DirEntry[str]) -> bool:
    """A symlink loop or a dangling link named `*.jsonl` is still a unit: its parse reports
    why it cannot be read, where `is_file` would raise or say nothing."""
    try:
        return entry.is_file() or entry.is_symlink()
    except OSError:
        return True


def _project_units(
    project: str, name: str, root: str, listing: Listing | None = None
) -> list[Unit]:
    listing = listing or Listing(root)
    out: list[Unit] = []
    for entry in listing.entries(project):
        if entry.name.endswith(".jsonl") and _is_file(entry):
            stem = entry.name[: -len(".jsonl")]
            if stem.startswith("agent-"):
                out.append(_unit(entry.path, root, name, agent_id=stem[6:], via="Task"))
            else:
                out.append(_unit(entry.path, root, name, session=stem))
        elif entry.is_dir(follow_symlinks=False):
            subagents = os.path.join(entry.path, "subagents")
            if os.path.isdir(subagents):
                out.extend(_subagent_units(subagents, root, name, entry.name, listing))
    return out


def _subagent_units(
    subagents: str, root: str, project: str, parent: str, listing: Listing
) -> list[Unit]:
    out = []
    folders = [(subagents, False)]
    while folders:
        folder, workflow = folders.pop()
        for entry in listing.entries(folder):
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                folders.append((entry.path, workflow or name == "workflows"))
            elif name.startswith("agent-") and name.endswith(".jsonl"):
                path = entry.path
                out.append(
                    _unit(path, root, project, agent_id=name[6:-6], parent=parent,
                          via="workflow" if workflow else "Task",
                          beside=[path[: -len(".jsonl")] + META])
                )  # fmt: skip
    return out


META_KEYS = ("agentType", "description", "worktreePath")


def read_meta(path: str | None) -> dict[str, Any]:
    """`agent-<id>.meta.json` (agentType, description, worktreePath; from 2.1.3xx `finished`, and
    `stoppedByUser` or `sweptByStop` when a person's stop ended it), read at parse time: the
    texts it names and how it ended, nothing of another type (a
    sidecar annotates its session; a damaged one must not keep the session from being
    stored)."""
    if not path:
        return {}
    try:
        value = orjson.loads(read_file(path))
    except (OSError, orjson.JSONDecodeError):
        return {}
    found = mapping(value)
    kept = {k: found[k] for k in META_KEYS if isinstance(found.get(k), str)}
    for flag in ("finished", "stoppedByUser", "sweptByStop"):
        if isinstance(found.get(flag), bool):
            kept[flag] = found[flag]
    return kept


def _unit(path: str, root: str, project: str, **info: Any) -> Unit:
    """`path` is already absolute and normalized: discovery starts from `abspath(projects)`
    (no `..`; symlinks are kept as the user named them) and only joins entry names to it."""
    info["project"] = project
    return Unit(PROVIDER, path, root, info)
