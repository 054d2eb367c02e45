"""The kit's layouts, for every source built on it: what discovery finds, the live watcher maps
back to the same unit from a changed path, and watches a folder that holds it; names starting
with a dot are matched only by a pattern that says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA
from tracehouse.parsers import aider, cline, copilot_cli, crush, kimi_cli, pi, qwen_code
from tracehouse.parsers.kit.layout import Layout

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
