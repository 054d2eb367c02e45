"""The files each unit's parse opens that `sync live` would not map back to it, as JSON lines.

    python -m tests.sources.reads_beside HOME [HOME ...]

Run apart from the tests' own processes: it watches every file the parses open through an audit
hook (`sys.addaudithook`), which stays for the life of the process. For every source with logs
in a home, each unit discovery finds is parsed from nothing; each file under the source's
watched folders that the parse opened and `unit_for` maps to no unit, or to another unit, is a
line: `{"provider", "home", "unit", "read", "maps_to"}` (paths relative to the home).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson

from tracehouse.parsers.base import ParseOptions, SourceParser
from tracehouse.parsers.registry import PARSERS

OPENED: list[str] = []


def roots(parser: SourceParser, home: Path) -> list[Path]:
    """The source's roots in `home` that exist."""
    if getattr(parser, "PER_PROJECT", False):  # logs kept in projects: the homes hold them there
        return [home / "projects"] if (home / "projects").is_dir() else []
    return [root for root in parser.default_roots(home, {}) if root.exists()]


def _opened(event: str, args: tuple[object, ...]) -> None:
    if event in ("open", "sqlite3.connect") and isinstance(args[0], str | bytes | os.PathLike):
        OPENED.append(os.path.abspath(os.fsdecode(args[0])))


def unmapped(home: Path) -> list[dict[str, str | None]]:
    out: list[dict[str, str | None]] = []
    for provider, parser in PARSERS.items():
        where = roots(parser, home)
        watched = [os.path.abspath(w) + os.sep for w in parser.watch_roots(where)] if where else []
        for unit in parser.discover(where) if where else ():
            OPENED.clear()
            parser.parse(unit, None, ParseOptions(now=2e9))
            for path in sorted(set(OPENED)):
                if not os.path.isfile(path) or not path.startswith(tuple(watched)):
                    continue
                mapped = parser.unit_for(path, where)
                if mapped is None or mapped.key != unit.key:
                    out.append({
                        "provider": provider,
                        "home": str(home),
                        "unit": os.path.relpath(unit.key, home),
                        "read": os.path.relpath(path, home),
                        "maps_to": mapped and os.path.relpath(mapped.key, home),
                    })  # fmt: skip
    return out


def main() -> None:
    sys.addaudithook(_opened)
    for home in sys.argv[1:]:
        for line in unmapped(Path(home).resolve()):
            sys.stdout.write(orjson.dumps(line).decode() + "\n")


if __name__ == "__main__":
    main()
