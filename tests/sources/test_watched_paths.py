"""What `sync live` does with a changed file, on every home of the tests' data and of the
fixtures, for every source: the path
maps (`unit_for`) to a unit discovery finds, or to none; and every unit discovery finds is
reached from a change to a file of its own. A unit that no changed file reaches is read only by
the watcher's full scan, every five minutes; a path that maps to a unit discovery does not know
would be read as a unit of its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import DATA
from tracehouse.parsers.base import SourceParser
from tracehouse.parsers.registry import PARSERS


def _roots(parser: SourceParser, home: Path) -> list[Path]:
    if getattr(parser, "PER_PROJECT", False):  # logs kept in projects: the homes hold them there
        return [home / "projects"] if (home / "projects").is_dir() else []
    return [root for root in parser.default_roots(home, {}) if root.exists()]


def _files(folders: list[Path]) -> list[str]:
    return [os.path.join(top, name) for folder in folders
            for top, _, names in os.walk(folder) for name in names]  # fmt: skip


def _reached(parser: SourceParser, home: Path) -> int:
    """The units discovery finds in `home`, each checked to be reached by a changed file."""
    roots = _roots(parser, home)
    found = {unit.key: unit for unit in parser.discover(roots)} if roots else {}
    reached = set()
    for path in _files(parser.watch_roots(roots)) if found else ():
        unit = parser.unit_for(path, roots)
        if unit is not None:
            assert unit.key in found, f"{path} maps to {unit.key}, which discovery lacks"
            assert unit == found[unit.key], (path, unit, found[unit.key])
            reached.add(unit.key)
    missed = sorted(set(found) - reached)
    assert not missed, f"{home}: no changed file reaches {missed[:3]}"
    return len(found)


# The sources with logs in a home under tests/data (Cursor's, Crush's, Zed's and Warp's tests
# build their databases instead).
HOMES = sorted(DATA.glob("*/home"))
HELD = [
    provider
    for provider, parser in PARSERS.items()
    if any(parser.discover(roots) for roots in (_roots(parser, h) for h in HOMES) if roots)
]


@pytest.mark.parametrize("provider", HELD)
def test_a_changed_file_reaches_its_unit(provider: str) -> None:
    assert sum(_reached(PARSERS[provider], home) for home in HOMES)


@pytest.mark.corpus
@pytest.mark.parametrize("provider", list(PARSERS))
def test_a_changed_file_reaches_its_unit_in_the_fixture_homes(provider: str, corpus: Path) -> None:
    homes = sorted((corpus / "homes").iterdir())
    if not sum(_reached(PARSERS[provider], home) for home in homes):
        pytest.skip(f"no fixture home holds {provider}'s logs")
