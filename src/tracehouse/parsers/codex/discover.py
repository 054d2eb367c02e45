"""Where Codex keeps rollouts, and which file is which unit (FORMATS §2.1).

A root is a CODEX_HOME. Units: `sessions/YYYY/MM/DD/rollout-*.jsonl`, the legacy single-JSON
`sessions/rollout-*.json`, the same names under `archived_sessions/` (archiving moves a rollout;
where both copies exist, the live one in `sessions/` is read), and `history.jsonl`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tracehouse.parsers.base import Unit, present, unreadable_directory, within
from tracehouse.parsers.codex import records as rec

PROVIDER = rec.PROVIDER
FOLDERS = ("sessions", "archived_sessions")
HISTORY = "history.jsonl"


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    found = env.get("CODEX_HOME", "").strip()
    return [Path(found).expanduser()] if found else [home / ".codex"]


def discover(roots: list[Path]) -> list[Unit]:
    units: dict[str, Unit] = {}
    for root in roots:
        home = os.path.abspath(root)
        live: set[str] = set()
        unreadable: list[OSError] = []
        for folder in FOLDERS:
            for dirpath, dirs, files in os.walk(
                os.path.join(home, folder), onerror=unreadable.append
            ):
                dirs.sort()
                for name in files:
                    if not _is_rollout(name) or (folder == "archived_sessions" and name in live):
                        continue
                    if folder == "sessions":
                        live.add(name)
                    unit = rollout_unit(os.path.join(dirpath, name), home)
                    units.setdefault(unit.key, unit)
        for exc in unreadable:
            if not isinstance(exc, FileNotFoundError) and exc.filename:
                unit = unreadable_directory(PROVIDER, str(exc.filename), home, exc)
                units.setdefault(unit.key, unit)
        history = os.path.join(home, HISTORY)
        if present(history):
            units.setdefault(
                history, Unit(PROVIDER, history, home, {"kind": "history", "home": home})
            )
    return sorted(units.values(), key=lambda u: u.key)


def rollout_unit(path: str, home: str) -> Unit:
    name = os.path.basename(path)
    info = {
        "kind": "legacy" if name.endswith(".json") else "rollout",
        "home": home,
        "thread": rec.thread_id_of(name),
        "archived": os.sep + "archived_sessions" + os.sep in path,
    }
    return Unit(PROVIDER, path, home, info)


def watch_roots(roots: list[Path]) -> list[Path]:
    return list(roots)


def unit_for(path: str, roots: list[Path]) -> Unit | None:
    path = os.path.abspath(path)
    for home, rel in within(path, roots):
        if rel == [HISTORY]:
            return Unit(PROVIDER, path, home, {"kind": "history", "home": home})
        if rel[0] in FOLDERS and _is_rollout(rel[-1]):
            return rollout_unit(path, home)
    return None


def _is_rollout(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith((".jsonl", ".json"))
