"""The kit's layouts, for every source built on it: what discovery finds, the live watcher maps
back to the same unit from a changed path, and watches a folder that holds it; names starting
with a dot are matched only by a pattern that says so."""

from __future__ import annotations

import fnmatch
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import DATA
from tracehouse.parsers import aider, cline, copilot_cli, crush, kimi_cli, pi, qwen_code
from tracehouse.parsers.goose.sessions import LAYOUT as GOOSE
from tracehouse.parsers.kit.layout import Layout, _matches
from tracehouse.parsers.warp.agent import LAYOUT as WARP
from tracehouse.parsers.zed.threads import LAYOUT as ZED

HOMES = {
    pi: DATA / "pi" / "home" / ".pi" / "agent",
    kimi_cli: DATA / "kimi" / "home" / ".kimi",
    qwen_code: DATA / "qwen" / "home" / ".qwen",
    copilot_cli: DATA / "copilot" / "home" / ".copilot",
    cline: DATA
    / "cline"
    / "home"
    / ".config"
    / "Code"
    / "User"
    / "globalStorage"
    / "saoudrizwan.claude-dev",
    aider: DATA / "aider" / "home",
}


@pytest.mark.parametrize("parser", list(HOMES), ids=lambda p: p.PROVIDER)
def test_a_changed_path_maps_to_the_unit_discovery_found(parser) -> None:
    roots = [HOMES[parser]]
    units = parser.discover(roots)
    assert units
    watched = parser.watch_roots(roots)
    for unit in units:
        assert parser.unit_for(unit.key, roots) == unit
        assert any(unit.path.is_relative_to(w) for w in watched), (unit.key, watched)
    assert parser.unit_for(str(roots[0] / "elsewhere" / "notes.txt"), roots) is None


@pytest.mark.parametrize("layout", [crush.LAYOUT, GOOSE, WARP, ZED], ids=lambda x: x.provider)
def test_a_databases_wal_or_journal_maps_to_the_database(tmp_path: Path, layout: Layout) -> None:
    """An app writing its database in WAL mode changes only the `-wal` until a checkpoint: the
    watcher must read the database then, not wait for its next full scan."""
    database = tmp_path / layout.patterns[0].replace("*", "p")
    database.parent.mkdir(parents=True, exist_ok=True)
    database.write_bytes(b"")
    unit = layout.unit_for(str(database), [tmp_path])
    assert unit is not None
    for side in ("-wal", "-journal"):
        assert layout.unit_for(f"{database}{side}", [tmp_path]) == unit
    assert layout.unit_for(f"{database}-shm", [tmp_path]) is None  # rebuilt from the -wal
    database.unlink()  # a -wal left behind by a database that is gone is no unit
    assert layout.unit_for(f"{database}-wal", [tmp_path]) is None


def test_a_project_log_is_watched_in_its_folder_not_the_whole_root(tmp_path: Path) -> None:
    shutil.copytree(DATA / "aider" / "home", tmp_path, dirs_exist_ok=True)
    (tmp_path / "projects" / "other" / "node_modules").mkdir(parents=True)
    assert aider.watch_roots([tmp_path]) == [tmp_path / "projects" / "site"]
    assert crush.watch_roots([tmp_path]) == []


def test_wildcards_skip_hidden_names_unless_the_pattern_names_them(tmp_path: Path) -> None:
    for folder in ("src/app", ".cache/app", "src/.hidden"):
        (tmp_path / folder / ".crush").mkdir(parents=True)
        (tmp_path / folder / ".crush" / "crush.db").write_bytes(b"")
    layout = Layout("crush", ("*/*/.crush/crush.db",))
    found = [u.key for u in layout.discover([tmp_path])]
    assert found == [str(tmp_path / "src" / "app" / ".crush" / "crush.db")]
    assert layout.unit_for(str(tmp_path / ".cache/app/.crush/crush.db"), [tmp_path]) is None


def test_a_folder_where_a_log_should_be_is_a_unit(tmp_path: Path) -> None:
    """Whatever stands where a pattern names a log is found, a folder too: its parse is the
    reject that says so, never a silent gap (a database replaced by a folder of its name)."""
    (tmp_path / "threads" / "threads.db").mkdir(parents=True)
    (tmp_path / "sessions" / "a.json").mkdir(parents=True)
    (tmp_path / "sessions" / "b").mkdir()
    layout = Layout("zed", ("threads/threads.db", "sessions/*.json"))
    found = [u.key for u in layout.discover([tmp_path])]
    assert found == [str(tmp_path / "sessions" / "a.json"), str(tmp_path / "threads/threads.db")]


NAME_CHARS = st.sampled_from(["a", "b", ".", "-", "j", "l"])
PART_CHARS = st.sampled_from(["a", "b", ".", "-", "j", "l", "*", "?", "[ab]", "[!a]"])


@given(name=st.text(NAME_CHARS, min_size=1, max_size=8),
       part=st.lists(PART_CHARS, min_size=1, max_size=6).map("".join))  # fmt: skip
def test_a_name_matches_a_part_as_a_shell_matches_it(name: str, part: str) -> None:
    """The quick match of a prefix and a suffix (`*.jsonl`, `agent-*.jsonl`) and the regular
    expression of the rest answer as a shell does: a wildcard matches no leading dot."""
    shell = fnmatch.fnmatchcase(name, part) and (part[0] == "." or name[0] != ".")
    assert _matches(name, part) == shell


def test_a_home_of_many_folders_is_listed_once_a_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per-project logs under 2,000 empty folders and one project each at depths 0 to 2, one of
    them reached through a link: every log is found, and each folder is listed once for all of
    a source's patterns, not once a pattern (issue #63: a home of 100,000 folders made a run
    with nothing new five times slower). A folder holding only a link to a project has no
    folder of its own to count (its link count says leaf): it is listed all the same."""
    import os

    from tracehouse.parsers.aider.history import LAYOUT as AIDER
    from tracehouse.parsers.crush.store import LAYOUT as CRUSH

    for i in range(2000):
        (tmp_path / f"empty{i}").mkdir()
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere" / "linked"
    logs = [tmp_path / ".aider.chat.history.md", tmp_path / "a" / ".aider.chat.history.md",
            tmp_path / "b" / "c" / ".aider.chat.history.md",
            elsewhere / ".aider.chat.history.md"]  # fmt: skip
    for log in logs:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("# aider chat started at 2026-01-01 10:00:00\n")
    (tmp_path / "projects").mkdir()
    (tmp_path / "projects" / "linked").symlink_to(elsewhere)
    crush = tmp_path / "d" / "e" / ".crush" / "crush.db"
    crush.parent.mkdir(parents=True)
    crush.write_bytes(b"")
    listed: list[str] = []
    real = os.scandir

    def counted(path: str) -> object:
        listed.append(path)
        return real(path)

    monkeypatch.setattr("tracehouse.parsers.base.os.scandir", counted)
    found = sorted(str(u.path) for u in AIDER.discover([tmp_path]))
    linked = str(tmp_path / "projects" / "linked" / ".aider.chat.history.md")
    assert found == sorted([*map(str, logs[:3]), linked])
    assert [str(u.path) for u in CRUSH.discover([tmp_path])] == [str(crush)]
    assert listed.count(str(tmp_path)) == 2  # once a source, not once a pattern
