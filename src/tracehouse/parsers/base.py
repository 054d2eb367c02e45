"""The source interface (STYLE "Source interface"): discover(roots) → units; parse(unit) → rows.

A parser module provides `default_roots`, `discover` and `parse`; `model/sources.py` lists
them explicitly, one line each, and `parsers/registry.py` imports them. Parse results travel
between processes, so they hold plain rows and frames.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson
import xxhash

from tracehouse.model.contract import Clear, ImportItem, Reject, WatermarkUpdate
from tracehouse.model.fingerprint import combine
from tracehouse.model.rows import row_fingerprint, tuples_to_frame, typed_row
from tracehouse.model.tables import SESSIONS, TABLES_BY_NAME
from tracehouse.parsers.kit.jsonl import MAX_LINE
from tracehouse.state.watermark import Action

if TYPE_CHECKING:
    import polars as pl


# What a parser raises on a record of an unexpected shape (a list where a dict was, a number
# too large, nesting too deep): the record becomes a reject naming where it is, never a crash.
SHAPE_ERRORS = (
    TypeError,
    ValueError,
    KeyError,
    AttributeError,
    IndexError,
    OverflowError,
    RecursionError,
)


def shape_error(exc: BaseException) -> str:
    return f"unexpected shape ({type(exc).__name__}: {exc})"


def session_item(
    provider: str,
    source_session_id: str,
    session_row: Mapping[str, Any],
    salt: Sequence[str],
    now: float,
    watermarks: tuple[WatermarkUpdate, ...] = (),
) -> ImportItem:
    """A built session as an import item: its row typed for the store, fingerprinted over that
    row and `salt` (where the source's content ends, or its digest), so a re-read of the same
    bytes is skipped by the store as a whole."""
    session = typed_row(SESSIONS, session_row)
    fingerprint = combine([row_fingerprint(SESSIONS, session), *salt])
    row = {**session, "fingerprint": fingerprint}
    return ImportItem(
        provider, source_session_id, fingerprint, int(now * 1000), row, watermarks, tuple(salt)
    )


@dataclass(frozen=True)
class Unit:
    """One thing a parser reads and keeps a watermark for: a file, a database composer."""

    provider: str
    key: str  # the watermark key: the absolute, normalized path for files
    root: str  # the root it was found under (a unit is only "missing" if its root was scanned)
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        # Derived, not stored: discovery makes thousands of units and pathlib objects are costly.
        return Path(self.key)


def within(path: str, roots: list[Path]) -> Iterator[tuple[str, list[str]]]:
    """For a changed path (`unit_for`): each root that holds it, absolute, with the path's
    parts below that root."""
    path = os.path.abspath(path)
    for root in roots:
        top = os.path.abspath(root)
        if path.startswith(top + os.sep):
            yield top, path[len(top) + 1 :].split(os.sep)


def entries(
    provider: str, path: str, root: str, unreadable: dict[str, Unit]
) -> list[os.DirEntry[str]]:
    """A directory's entries by name; none if it is not there. One that cannot be listed adds a
    unit to `unreadable` whose parse is the reject that says so (`unreadable_directory`)."""
    try:
        return sorted(os.scandir(path), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        unit = unreadable_directory(provider, path, root, exc)
        unreadable.setdefault(unit.key, unit)
        return []


def present(path: str) -> bool:
    """Whether discovery takes what is at `path` as a unit: anything by that name, a directory
    or a dangling link too. Its parse then says what is wrong with it (opening a directory
    fails; `dangling` names a link to nothing), where leaving it out would say nothing."""
    return os.path.lexists(path)


def dangling(path: str) -> str | None:
    """Why a unit's path that stat cannot find is still a unit: a link to nothing."""
    if not os.path.islink(path):
        return None
    try:
        os.stat(path)
    except FileNotFoundError:
        return f"a symbolic link to {os.readlink(path)}, which does not exist"
    except OSError:
        return None  # a loop: opening it says so
    return None


def unreadable_directory(provider: str, path: str, root: str, exc: OSError) -> Unit:
    """A directory discovery could not list, as a unit whose parse is one reject naming it: the
    run says so and exits 1, instead of leaving out what the directory holds without a word."""
    return Unit(provider, path, root, {"unreadable": exc.strerror or str(exc)})


@dataclass(frozen=True)
class ParseOptions:
    full: bool = False
    budget_bytes: int = 32 * 1024 * 1024
    max_field: int = 1024 * 1024
    # A line longer than this (or a document read whole) is skipped unread and rejected.
    max_line: int = MAX_LINE
    quiet_seconds: float = 2.0
    now: float = 0.0  # wall clock of the run (seconds), for the quiet-line rule
    # A private directory that outlives one parse (sync live): a parser may keep copies of what
    # it reads there between runs, as Cursor keeps its database snapshots. None: keep nothing.
    scratch: str | None = None


@dataclass
class UnitResult:
    unit: Unit
    action: Action
    item: ImportItem | None = None
    extra: list[ImportItem] = field(default_factory=list)  # more sessions from one unit
    # table name → rows in the table's column order; frames are built once per batch
    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    watermark: WatermarkUpdate | None = None  # set when there is no item to carry it
    rejects: list[Reject] = field(default_factory=list)
    bytes_read: int = 0
    done: bool = True
    accounting: Counter[str] = field(default_factory=Counter)
    cursor: Mapping[str, Any] | None = None  # the new cursor, for the next chunk
    mtime_ns: int = 0  # when the unit was last written, as stat saw it (for the tail lag)
    clear: Clear | None = None  # what this parse read again: its old rejects there may resolve
    redacted: Counter[str] = field(default_factory=Counter)  # kind → secrets replaced

    def frames(self) -> dict[str, pl.DataFrame]:
        return {
            name: tuples_to_frame(TABLES_BY_NAME[name], rows) for name, rows in self.rows.items()
        }


Stats = Mapping[str, list[int] | None]  # a unit's files → [inode, size, mtime], None: not there


def file_stat(path: str) -> list[int] | None:
    """What a plan compares of a file a unit is read from; None where there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def plan_files(files: Stats, cursor: Mapping[str, Any] | None, full: bool, kept: Any) -> int | None:
    """Bytes a parse of a unit read from `files` may read, or None when its cursor holds the
    same stats (`kept`: as the cursor keeps them, whole or as their digest)."""
    if full or not cursor or cursor.get("missing") or cursor.get("files") != kept:
        return sum(f[1] for f in files.values() if f)
    return None


def files_result(unit: Unit, files: Stats) -> UnitResult:
    """The result of a parse of a unit read whole from `files`: their bytes, the newest mtime."""
    size = sum(f[1] for f in files.values() if f)
    mtime = max((f[2] for f in files.values() if f), default=0)
    return UnitResult(unit, Action.FULL, bytes_read=size, mtime_ns=mtime)


def files_digest(files: Mapping[str, Any]) -> str:
    """A unit's stats of the files it is read from (name → [inode, size, mtime]) as the short
    digest its cursor keeps: a plan compares it to tell whether any of them changed."""
    return xxhash.xxh3_64_hexdigest(orjson.dumps(files, option=orjson.OPT_SORT_KEYS))


def reading_side(package: str, name: str) -> Any:
    """A parser package's `parse`, from its `reader` module, imported on first use (`__getattr__`
    of the package, PEP 562): a sync plans from discovery alone, and one with nothing new to
    read never imports what reads (docs/performance.md). The reader is not named `parse`, as the
    function is: a submodule imported after its package is bound over the package's attribute
    of that name."""
    if name != "parse":
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    parse = importlib.import_module(f"{package}.reader").parse
    vars(sys.modules[package])["parse"] = parse  # an attribute now: the next use is a lookup
    return parse


class SourceParser(Protocol):
    """A source. It may also define `plan_unit(unit, cursor, full) -> int | None` (bytes it may
    read, None for unchanged) when one stat of the unit's path cannot tell whether it changed:
    a Cursor unit is a database plus its `-wal`. Without it, the sync plans from that stat."""

    PROVIDER: str

    def default_roots(self, home: Path, env: Mapping[str, str]) -> list[Path]: ...

    def discover(self, roots: list[Path]) -> list[Unit]: ...

    def watch_roots(self, roots: list[Path]) -> list[Path]:
        """Directories whose changes the live watcher follows (recursively)."""
        ...

    def unit_for(self, path: str, roots: list[Path]) -> Unit | None:
        """The unit a changed path belongs to, or None if the path is not a unit's."""
        ...

    def parse(
        self, unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions
    ) -> UnitResult: ...
