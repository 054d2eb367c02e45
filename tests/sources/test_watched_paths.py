"""What `sync live` does with a changed file, on every home of the tests' data and of the
fixtures, for every source: the path maps (`unit_for`) to a unit discovery finds, or to none;
every unit discovery finds is reached from a change to a file of its own; and a file a unit's
parse reads beside its own maps back to it, or is one of the files below that say why not. A
unit that no changed file reaches is read only by the watcher's full scan, every five minutes;
a path that maps to a unit discovery does not know would be read as a unit of its own; and a
file read beside a log that maps to nothing is seen only when the log itself changes again."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import DATA, REPO
from tests.sources.reads_beside import roots as _roots
from tracehouse.parsers.base import SourceParser
from tracehouse.parsers.registry import PARSERS


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


# Files a parse reads beside its unit that no change of theirs needs to reach it, by source:
# a pattern on the path read (relative to the home), and why.
NOT_MAPPED = {
    # the prompts' times: Aider writes each prompt into the chat history too, which is the unit
    "aider": r"\.aider\.input\.history$",
    # another session's transcript: a resumed or forked session's copied lines are told apart
    # by what the first one said
    "claude-code": r"\.claude/projects/.*\.jsonl$",
    # a forked thread's parent rollout (what it copied was said before the fork); the typed
    # prompts (a unit of their own); the thread index every rollout shares (a rename is written
    # into the rollout too, and lineage waits for the rollout's next line)
    "codex": r"\.codex/((archived_)?sessions/.*\.jsonl|history\.jsonl|session_index\.jsonl"
    r"|state_\d+\.sqlite(-wal)?)$",
    # the index every session shares: reading every session again whenever any one is saved
    # would cost more than a start time that waits for the session's next save
    "continue": r"sessions/sessions\.json$",
    # a workspace's database (a unit of its own) and folder: which workspace a composer is in
    "cursor": r"workspaceStorage/[^/]+/(state\.vscdb|workspace\.json)$",
    # the project's path, written once, when the project is first used
    "gemini-cli": r"\.gemini/(projects\.json|tmp/[^/]+/\.project_root)$",
    # an event: OpenHands' server rewrites metadata.json, the unit, after each event it stores
    "openhands": r"sessions/[0-9a-f]+/events/\d+\.json$",
}
SHM = re.compile(r"-shm$")  # a database's shared memory, rebuilt from its -wal


def _reads_beside(homes: list[Path]) -> list[dict[str, str]]:
    done = subprocess.run([sys.executable, "-m", "tests.sources.reads_beside", *map(str, homes)],
                          cwd=REPO, capture_output=True, check=True, timeout=300)  # fmt: skip
    return [orjson.loads(line) for line in done.stdout.splitlines()]


def _unexplained(homes: list[Path]) -> list[dict[str, str]]:
    return [read for read in _reads_beside(homes) if not SHM.search(read["read"])
            and not re.search(NOT_MAPPED.get(read["provider"], "^$"), read["read"])]  # fmt: skip


def test_a_file_read_beside_a_unit_maps_back_to_it() -> None:
    assert _unexplained(HOMES) == []


@pytest.mark.corpus
def test_a_file_read_beside_a_unit_maps_back_to_it_in_the_fixture_homes(corpus: Path) -> None:
    assert _unexplained(sorted((corpus / "homes").iterdir())) == []
