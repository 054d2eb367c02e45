"""What discovery found in each folder it listed, kept from one run to the next, so that a run
with nothing new looks at a folder it listed before with one `stat` instead of listing it.

Logs kept inside projects (Aider, Crush) are looked for in every folder two levels below the
project roots: a home of 100,000 folders was 100,000 listings per source and run. A folder's
listing still holds while the folder is the same inode with the same change time: adding,
removing or renaming an entry, or setting its times, moves the change time, and no program can
set it back. What a listing holds: each name and whether it is a folder (`d`), a link (`l`,
followed afresh each run, as its target may change without its folder knowing) or anything
else (`f`).

A listing made while its folder may still be changing within the same clock tick is used for
this run but not kept (`SETTLE_NS`): a file created a moment after the listing could otherwise
share its change time and stay unseen. The file is a cache: unreadable, stale or missing, it
costs one run the listings, never a unit.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

Listing = dict[str, str]  # name → "d", "l" or "f"
# Two seconds: more than a change time's tick on any local file system (ext4's coarse clock is
# a few milliseconds, FAT's two seconds).
SETTLE_NS = 2_000_000_000
KEPT_FILES = 32  # cache files of other root sets, newest first; older ones are removed
FORMAT = 1


@dataclass
class Folders:
    """The listings of one run, and those a previous run kept (`kept`: path → [device, inode,
    change time, names, kinds])."""

    kept: dict[str, list[object]] = field(default_factory=dict)
    listed: dict[str, Listing] = field(default_factory=dict)
    fresh: dict[str, list[object]] = field(default_factory=dict)
    reused: int = 0
    settle_ns: int = SETTLE_NS
    # False: the listings serve this run alone (a source's own discovery), so no `stat` keys them.
    remember: bool = True

    @classmethod
    def load(cls, path: Path, settle_ns: int = SETTLE_NS) -> Folders:
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            data = None
        ours = isinstance(data, dict) and data.get("format") == FORMAT
        kept = data.get("folders") if ours else None  # type: ignore[union-attr]
        return cls(kept=kept if isinstance(kept, dict) else {}, settle_ns=settle_ns)

    def listing(self, path: str) -> Listing | None:
        """`path`'s entries; None where there is no folder. Raises the OSError of a folder that
        exists but cannot be listed."""
        if path in self.listed:
            return self.listed[path]
        if not self.remember:
            found = _list(path)
            if found is not None:
                self.listed[path] = found
            return found
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        before = self.kept.get(path)
        found = _reuse(before, st) if before is not None else None
        if found is not None:
            self.fresh[path] = before  # type: ignore[assignment]
            self.reused += 1
        else:
            found = _list(path)
            if found is None:
                return None
            if time.time_ns() - st.st_ctime_ns > self.settle_ns:
                key = [st.st_dev, st.st_ino, st.st_ctime_ns]
                self.fresh[path] = [*key, list(found), "".join(found.values())]
        self.listed[path] = found
        return found

    def save(self, path: Path) -> None:
        """Keep this run's listings, when they differ from what was kept (a run that changed
        nothing writes nothing), replacing the file at once; then drop the oldest other files."""
        if self.fresh == self.kept:
            return
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.partial")
            partial.write_bytes(orjson.dumps({"format": FORMAT, "folders": self.fresh}))
            os.replace(partial, path)
            _prune(path.parent)


def _reuse(before: Any, st: os.stat_result) -> Listing | None:
    """A kept listing, if it was made of this very folder as it is now."""
    try:
        dev, ino, ctime, names, kinds = before
        if dev != st.st_dev or ino != st.st_ino or ctime != st.st_ctime_ns:
            return None
        if not names:
            return {}
        if len(names) != len(kinds) or not isinstance(kinds, str):
            return None
        return dict(zip(names, kinds, strict=True))
    except (TypeError, ValueError):  # a damaged file: list the folder
        return None


def _list(path: str) -> Listing | None:
    try:
        with os.scandir(path) as entries:
            found = {}
            for entry in entries:  # most are files: one question of each
                if entry.is_file(follow_symlinks=False):
                    found[entry.name] = "f"
                elif entry.is_dir(follow_symlinks=False):
                    found[entry.name] = "d"
                else:
                    found[entry.name] = "l" if entry.is_symlink() else "f"
    except (FileNotFoundError, NotADirectoryError):
        return None
    return found


def is_folder(path: str, kind: str) -> bool:
    return kind == "d" or (kind == "l" and os.path.isdir(path))


def _prune(directory: Path) -> None:
    files = sorted(directory.glob("*.json"), key=_age)
    for old in files[:-KEPT_FILES]:
        with contextlib.suppress(OSError):
            old.unlink()


def _age(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
