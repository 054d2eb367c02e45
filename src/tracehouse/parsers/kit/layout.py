"""Where a source's files are, said as patterns under its roots: discovery, the live watcher's
`unit_for` and a `--source NAME=PATH` root all follow from one declaration.

A pattern is a path below a root, `/`-separated, whose parts may hold shell wildcards
(`sessions/*/*.jsonl`); as in a shell, a wildcard does not match a name starting with `.`
unless its part does (`*/.crush/crush.db` looks into `~/src`, not `~/.cache`). Parts without
one are joined without listing their directory, so a root without the source costs one failed
`scandir`; a directory that cannot be listed is a unit whose parse is the reject that says so
(`base.unreadable_directory`), never a silent gap.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracehouse.parsers.base import Unit, entries, within

Info = Callable[[str, list[str]], Mapping[str, Any] | None]


def _no_info(top: str, parts: list[str]) -> Mapping[str, Any]:
    return {}


@dataclass(frozen=True)
class Layout:
    provider: str
    patterns: tuple[str, ...]
    # A unit's info from its root and its path's parts below it (None: not a unit after all).
    info: Info = field(default=_no_info)
    per_project: bool = False

    def discover(self, roots: list[Path]) -> list[Unit]:
        units: dict[str, Unit] = {}
        for root in roots:
            top = os.path.abspath(root)
            for pattern in self.patterns:
                self._walk(top, top, pattern.split("/"), [], units)
        return sorted(units.values(), key=lambda u: u.key)

    def unit_for(self, path: str, roots: list[Path]) -> Unit | None:
        for top, parts in within(path, roots):
            for pattern in self.patterns:
                wanted = pattern.split("/")
                if len(parts) == len(wanted) and all(map(_matches, parts, wanted)):
                    return self._unit(os.path.join(top, *parts), top, parts)
        return None

    def watch_roots(self, roots: list[Path]) -> list[Path]:
        """What the live watcher follows: the roots, or for logs kept in projects
        (`per_project`) only the folders that hold one, not every project under the roots
        (a new project is found by the watcher's periodic full scan)."""
        if self.per_project:
            return sorted(
                {u.path.parent for u in self.discover(roots) if "unreadable" not in u.info}
            )
        return list(roots)

    def _walk(
        self, top: str, here: str, rest: list[str], parts: list[str], units: dict[str, Unit]
    ) -> None:
        head, *tail = rest
        if not any(ch in head for ch in "*?["):
            path = os.path.join(here, head)
            if tail:
                self._walk(top, path, tail, [*parts, head], units)
            elif os.path.lexists(path) and not os.path.isdir(path):
                self._add(path, top, [*parts, head], units)
            return
        for entry in entries(self.provider, here, top, units):
            if not _matches(entry.name, head):
                continue
            if tail:
                if entry.is_dir():  # a linked folder too: a pattern's depth bounds the walk
                    self._walk(top, entry.path, tail, [*parts, entry.name], units)
            elif not entry.is_dir():
                self._add(entry.path, top, [*parts, entry.name], units)

    def _add(self, path: str, top: str, parts: list[str], units: dict[str, Unit]) -> None:
        unit = self._unit(path, top, parts)
        if unit is not None:
            units.setdefault(unit.key, unit)

    def _unit(self, path: str, top: str, parts: list[str]) -> Unit | None:
        info = self.info(top, parts)
        return None if info is None else Unit(self.provider, path, top, dict(info))


def _matches(name: str, part: str) -> bool:
    return fnmatch.fnmatchcase(name, part) and (not name.startswith(".") or part.startswith("."))
