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
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracehouse.parsers.base import Unit, entries, within

Info = Callable[[str, list[str]], Mapping[str, Any] | None]
_LITERAL = re.compile(r"^[^*?\[]*$")


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
        wanted = [tuple(pattern.split("/")) for pattern in self.patterns]
        for root in roots:
            top = os.path.abspath(root)
            self._walk(top, top, wanted, [], units)
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
        self, top: str, here: str, rest: list[tuple[str, ...]], parts: list[str],
        units: dict[str, Unit],
    ) -> None:  # fmt: skip
        """Every pattern's remaining parts below `here` at once: a directory is listed once
        for all the patterns that list it, and a name without wildcards costs one `lstat`.
        A home with 100,000 project folders made each pattern of each per-project source list
        and stat them all again."""
        literal: dict[str, list[tuple[str, ...]]] = {}
        globbed: list[tuple[str, ...]] = []
        for pattern in rest:
            if _LITERAL.match("/".join(pattern)):  # a path to try as it is: one `lstat`
                path = os.path.join(here, *pattern)
                if _a_file(path):
                    self._add(path, top, [*parts, *pattern], units)
            elif any(ch in pattern[0] for ch in "*?["):
                globbed.append(pattern)
            else:
                literal.setdefault(pattern[0], []).append(pattern[1:])
        for name, tails in literal.items():
            path = f"{here}{os.sep}{name}"
            if any(not tail for tail in tails) and _a_file(path):
                self._add(path, top, [*parts, name], units)
            deeper = [tail for tail in tails if tail]
            if deeper:
                self._walk(top, path, deeper, [*parts, name], units)
        if not globbed:
            return
        for entry in entries(self.provider, here, top, units):
            name = entry.name
            matched = [p for p in globbed if _matches(name, p[0])]
            if not matched:
                continue
            if any(len(p) == 1 for p in matched) and not entry.is_dir():
                self._add(entry.path, top, [*parts, name], units)
            deeper = [p[1:] for p in matched if len(p) > 1]
            if deeper and entry.is_dir():  # a linked folder too: a pattern's depth bounds it
                self._walk(top, entry.path, deeper, [*parts, name], units)

    def _add(self, path: str, top: str, parts: list[str], units: dict[str, Unit]) -> None:
        unit = self._unit(path, top, parts)
        if unit is not None:
            units.setdefault(unit.key, unit)

    def _unit(self, path: str, top: str, parts: list[str]) -> Unit | None:
        info = self.info(top, parts)
        return None if info is None else Unit(self.provider, path, top, dict(info))


def _matches(name: str, part: str) -> bool:
    if name.startswith(".") and not part.startswith("."):
        return False
    return part == "*" or fnmatch.fnmatchcase(name, part)


def _a_file(path: str) -> bool:
    """Whether discovery takes what is at `path` as a unit (`base.present`): anything but a
    directory, a dangling link too, in one `lstat` (a link is followed only to see whether it
    leads to a directory)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    if stat.S_ISLNK(mode):
        return not os.path.isdir(path)
    return not stat.S_ISDIR(mode)
