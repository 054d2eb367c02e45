"""Discovery under project roots keeps its folder listings between runs (issue #63: a home of
100,000 folders): a run with nothing new looks at each folder with one `stat`, and whatever
changed since (a log added, a folder replaced, a link pointed elsewhere, a listing kept in the
same clock tick as a change) is found exactly as a run without the kept listings finds it."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app
from tracehouse.parsers import aider, crush
from tracehouse.parsers.kit.folders import Folders

CHAT = (DATA / "aider" / "home" / "projects" / "site" / ".aider.chat.history.md").read_bytes()
NAME = ".aider.chat.history.md"
TICK = 0.03  # longer than a change time's tick, so a change after a listing moves it


def _keys(units: list) -> list[str]:
    return [u.key for u in units]


def _again(cache: Path, roots: list[Path]) -> tuple[list[str], Folders]:
    folders = Folders.load(cache, settle_ns=0)
    units = _keys(aider.discover(roots, folders)) + _keys(crush.discover(roots, folders))
    folders.save(cache)
    return units, folders


def _fresh(roots: list[Path]) -> list[str]:
    return _keys(aider.discover(roots)) + _keys(crush.discover(roots))


def _home(tmp_path: Path, folders: int = 30) -> Path:
    home = tmp_path / "home"
    for i in range(folders):
        (home / "src" / f"p{i}").mkdir(parents=True)
    (home / "src" / "p1" / NAME).write_bytes(CHAT)
    return home


def test_a_run_with_nothing_new_lists_no_folder(tmp_path: Path) -> None:
    home, cache = _home(tmp_path), tmp_path / "folders.json"
    first, _ = _again(cache, [home])
    time.sleep(TICK)
    second, folders = _again(cache, [home])
    assert first == second == _fresh([home]) and len(first) == 1
    # home, src and its 30 projects: each seen unchanged, for both sources at once
    assert folders.reused == 32 and len(folders.listed) == 32


def test_what_changed_in_a_listed_folder_is_found(tmp_path: Path) -> None:
    home, cache = _home(tmp_path), tmp_path / "folders.json"
    _again(cache, [home])
    time.sleep(TICK)
    (home / "src" / "p7" / NAME).write_bytes(CHAT)  # a log in a listed project
    shutil.rmtree(home / "src" / "p1")  # a project replaced by one of the same name
    (home / "src" / "p1" / ".crush").mkdir(parents=True)
    (home / "src" / "p1" / ".crush" / "crush.db").write_bytes(b"")  # discovery never opens it
    found, folders = _again(cache, [home])
    assert found == _fresh([home])
    assert [Path(k).relative_to(home).parts[1] for k in found] == ["p7", "p1"]
    assert folders.reused == 29  # all but p7, p1 and src, whose entry p1 was replaced


def test_a_link_pointed_elsewhere_is_followed_afresh(tmp_path: Path) -> None:
    home, cache = _home(tmp_path, folders=2), tmp_path / "folders.json"
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "a").mkdir(parents=True)
    (elsewhere / "b").mkdir()
    (elsewhere / "b" / NAME).write_bytes(CHAT)
    os.symlink(elsewhere / "a", home / "src" / "linked")
    _again(cache, [home])
    time.sleep(TICK)
    os.unlink(home / "src" / "linked")
    os.symlink(elsewhere / "b", home / "src" / "linked")
    found, _ = _again(cache, [home])
    assert found == _fresh([home]) and str(home / "src" / "linked" / NAME) in found


def test_a_listing_made_while_its_folder_may_still_change_is_not_kept(tmp_path: Path) -> None:
    home, cache = _home(tmp_path, folders=2), tmp_path / "folders.json"
    folders = Folders()  # the real settling time: every folder here changed a moment ago
    aider.discover([home], folders)
    folders.save(cache)
    assert Folders.load(cache).kept == {}


def test_a_damaged_cache_costs_the_listings_not_a_unit(tmp_path: Path) -> None:
    home, cache = _home(tmp_path), tmp_path / "folders.json"
    _again(cache, [home])
    for damage in [b"{not json", b'{"format": 1, "folders": {"x": 3}}', b"[]",
                   cache.read_bytes().replace(b'"d"', b'"dd"')]:  # fmt: skip
        cache.write_bytes(damage)
        assert _again(cache, [home])[0] == _fresh([home])


def test_the_command_keeps_the_listings_in_the_state_directory(tmp_path: Path) -> None:
    home = _home(tmp_path)
    time.sleep(2.1)  # the folders settle: a listing of a folder changed a moment ago is not kept
    command = ["sync", "backfill", "--home", str(home), "--store", str(tmp_path / "ledger.db")]
    assert CliRunner().invoke(app, command).exit_code == 0
    kept = list((tmp_path / "xdg-state" / "tracehouse" / "folders").glob("*.json"))
    assert len(kept) == 1


OPS = st.lists(
    st.tuples(
        st.sampled_from(["log", "crush", "mkdir", "rmtree", "link", "unlink", "touch"]),
        st.integers(0, 5),
        st.integers(0, 5),
    ),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(OPS, min_size=1, max_size=3))
def test_kept_listings_find_what_a_fresh_walk_finds(tmp_path_factory, steps) -> None:
    root = tmp_path_factory.mktemp("home")
    cache = root.parent / f"{root.name}.json"
    for ops in steps:
        for op, a, b in ops:
            _apply(root, op, a, b)
        assert _again(cache, [root])[0] == _fresh([root])
        time.sleep(TICK)


def _apply(root: Path, op: str, a: int, b: int) -> None:
    folder = root / f"d{a}" / f"p{b}" if b % 2 else root / f"d{a}"
    if op == "mkdir":
        folder.mkdir(parents=True, exist_ok=True)
    elif op == "log" and folder.is_dir():
        (folder / NAME).write_bytes(CHAT)
    elif op == "crush" and folder.is_dir():
        (folder / ".crush").mkdir(exist_ok=True)
        (folder / ".crush" / "crush.db").write_bytes(b"")
    elif op == "rmtree" and folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder)
    elif op == "link" and not os.path.lexists(root / f"l{a}"):
        os.symlink(root / f"d{b}", root / f"l{a}")
    elif op == "unlink" and os.path.islink(root / f"l{a}"):
        os.unlink(root / f"l{a}")
    elif op == "touch" and folder.is_dir():
        os.utime(folder, (0, 0))  # a folder's times set back: its change time still moves
