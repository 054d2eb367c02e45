"""Where a source's files are, said as patterns under its roots: discovery, the live watcher's
`unit_for` and a `--source NAME=PATH` root all follow from one declaration.

A pattern is a path below a root, `/`-separated, whose parts may hold shell wildcards
(`sessions/*/*.jsonl`); as in a shell, a wildcard does not match a name starting with `.`
unless its part does (`*/.crush/crush.db` looks into `~/src`, not `~/.cache`). Parts without
one are looked up in their folder's listing (`folders.Folders`, kept between runs where the
source asks for it); a directory that cannot be listed is a unit whose parse is the reject
that says so (`base.unreadable_directory`), never a silent gap. So is whatever stands where a
pattern names a log (`base.present`): a folder, a dangling link.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracehouse.parsers.base import Unit, unreadable_directory, within
from tracehouse.parsers.kit.folders import Folders, is_folder
from tracehouse.parsers.kit.sqlite_snapshot import SIDE_FILES

Info = Callable[[str, list[str]], Mapping[str, Any] | None]
_WILD = re.compile(r"[*?\[]")


def _no_info(top: str, parts: list[str]) -> Mapping[str, Any]:
    return {}


@dataclass(frozen=True)
class Layout:
    provider: str
    patterns: tuple[str, ...]
    # A unit's info from its root and its path's parts below it (None: not a unit after all).
    info: Info = field(default=_no_info)
    per_project: bool = False
    # Names of files a JSONL unit's parse reads beside its own, in its folder (a subagent's
    # `meta.json`), which its info lists under `beside` (`kit.jsonl_unit` keeps their stamps
    # in its cursor): a change to one alone is the unit's.
    sidecars: tuple[str, ...] = ()
    # The unit a matched file is part of, where that is not the file alone (the Cursor agent's
    # `<id>.txt` and `<id>.jsonl` are twins of one transcript, keyed `<id>`).
    key: Callable[[str], str] | None = None

    def discover(self, roots: list[Path], folders: Folders | None = None) -> list[Unit]:
        """The units under `roots`; `folders` keeps the listings between runs (a source whose
        logs are kept in projects, where there are many folders to look into)."""
        found = discover_together([(self, roots)], folders or Folders(remember=False))
        return found[self.provider]

    def unit_for(self, path: str, roots: list[Path]) -> Unit | None:
        """The unit a changed path is, or the database a changed `-wal` or `-journal` belongs
        to: an app writing its database in WAL mode touches only the `-wal` until a checkpoint,
        so the database's own file may not change for hundreds of writes. A sidecar is its
        unit's."""
        for top, parts in within(path, roots):
            for name in (parts[-1], *_database_of(parts[-1], os.path.join(top, *parts))):
                unit = self._matched(top, [*parts[:-1], name])
                if unit is not None:
                    return unit
            if any(_matches(parts[-1], sidecar) for sidecar in self.sidecars):
                return self._beside(top, parts)
        return None

    def _matched(self, top: str, parts: list[str]) -> Unit | None:
        for pattern in self.patterns:
            wanted = pattern.split("/")
            if len(parts) == len(wanted) and all(map(_matches, parts, wanted)):
                path = os.path.join(top, *parts)
                return self._unit(self._key(path), top, parts)
        return None

    def _beside(self, top: str, parts: list[str]) -> Unit | None:
        """The unit in the sidecar's folder whose info names it: the names that begin as the
        sidecar's does first (`<id>.jsonl` for `<id>.settings.json`, in a folder of many)."""
        path = os.path.join(top, *parts)
        stem = parts[-1].split(".", 1)[0]
        try:
            names = sorted(os.listdir(os.path.dirname(path)))
        except OSError:
            return None
        names.sort(key=lambda name: not name.startswith(stem))
        for name in names:
            unit = self._matched(top, [*parts[:-1], name])
            if unit is not None and path in unit.info.get("beside", ()):
                return unit
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

    def _add(self, path: str, top: str, parts: list[str], units: dict[str, Unit]) -> None:
        key = self._key(path)
        if key not in units:  # else a twin of a unit found already
            unit = self._unit(key, top, parts)
            if unit is not None:
                units[key] = unit

    def _unit(self, key: str, top: str, parts: list[str]) -> Unit | None:
        info = self.info(top, parts)
        return None if info is None else Unit(self.provider, key, top, dict(info))

    def _key(self, path: str) -> str:
        return self.key(path) if self.key else path


Wanted = tuple[Layout, tuple[str, ...]]  # a source's pattern: what is left of it below a folder


def discover_together(
    sources: list[tuple[Layout, list[Path]]], folders: Folders
) -> dict[str, list[Unit]]:
    """provider → its units, for sources that look into the same folders (the logs kept in
    projects, under the same project roots): each folder is looked at once for all of them."""
    found: dict[str, dict[str, Unit]] = {layout.provider: {} for layout, _ in sources}
    by_root: dict[str, list[Wanted]] = {}
    for layout, roots in sources:
        for root in roots:
            wanted = by_root.setdefault(os.path.abspath(root), [])
            wanted += [(layout, tuple(pattern.split("/"))) for pattern in layout.patterns]
    for top, wanted in by_root.items():
        _walk(top, top, wanted, [], found, folders)
    return {provider: sorted(units.values(), key=lambda u: u.key)
            for provider, units in found.items()}  # fmt: skip


def _walk(
    top: str, here: str, rest: list[Wanted], parts: list[str],
    found: dict[str, dict[str, Unit]], folders: Folders,
) -> None:  # fmt: skip
    """Every pattern's remaining parts below `here` at once, from one listing of `here`
    (`folders`: one `stat` where a run before listed it). A home with 100,000 project folders
    made each pattern of each per-project source list and stat them all again."""
    try:
        names = folders.listing(here)
    except OSError as exc:
        for provider in {layout.provider for layout, _ in rest}:
            unit = unreadable_directory(provider, here, top, exc)
            found[provider].setdefault(unit.key, unit)
        return
    if not names:
        return
    by_head: dict[str, list[Wanted]] = {}
    for wanted in rest:
        by_head.setdefault(wanted[1][0], []).append(wanted)
    below: dict[str, list[Wanted]] = {}
    for head, group in by_head.items():
        if not _WILD.search(head):
            matched = [head] if head in names else []
        else:
            matched = _select(head)(names)
        tails = [(layout, pattern[1:]) for layout, pattern in group if len(pattern) > 1]
        ends = [layout for layout, pattern in group if len(pattern) == 1]
        for name in matched:
            kind = names[name]
            if tails and kind != "f":  # a linked folder too: a pattern's depth bounds it
                below.setdefault(name, []).extend(tails)
            for layout in ends:  # whatever is there: its parse says what is wrong with it
                layout._add(f"{here}{os.sep}{name}", top, [*parts, name], found[layout.provider])
    for name, tails in below.items():
        path = f"{here}{os.sep}{name}"
        if is_folder(path, names[name]):
            _walk(top, path, tails, [*parts, name], found, folders)


def _database_of(name: str, path: str) -> list[str]:
    """The database a side file's name belongs to, where that database is there."""
    for suffix in SIDE_FILES:
        if name.endswith(suffix) and os.path.isfile(path.removesuffix(suffix)):
            return [name.removesuffix(suffix)]
    return []


def _matches(name: str, part: str) -> bool:
    return bool(_select(part)((name,)))


@functools.cache
def _select(part: str) -> Callable[[Iterable[str]], list[str]]:
    """The names that match a pattern's part, as a shell would match them: discovery asks it
    of every folder it lists, and the common shapes (`*`, `*.jsonl`, `agent-*.jsonl`) are a
    prefix and a suffix, picked out without a regular expression."""
    hidden = part.startswith(".")
    head, star, tail = part.partition("*")
    if star and not _WILD.search(head + tail):
        least = len(head) + len(tail)
        return lambda names: [
            n for n in names if n.startswith(head) and n.endswith(tail) and len(n) >= least
            and (hidden or n[0] != ".")
        ]  # fmt: skip
    match = re.compile(fnmatch.translate(part)).match
    return lambda names: [n for n in names if (hidden or n[0] != ".") and match(n)]
