"""A reject is resolved when its location later imports cleanly (issue #13, item 6), and raised
again it is unresolved again."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA
from tests.sources.cursor_dbs import bubble, new_db, put, split
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync

CLAUDE_HOME = DATA / "claude" / "home"
BAD = b'{"type":"user","n":NaN}'


def rejects(store: Any) -> list[tuple[str, bool]]:
    return sorted((r["location"], r["resolved_at"] is not None) for r in store.rows("rejects"))


def claude(store: Any, home: Path) -> Any:
    return sync(store, SyncOptions(sources={"claude-code": [home / ".claude"]}))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(CLAUDE_HOME, home)
    return home


def main_file(home: Path) -> Path:
    return next((home / ".claude" / "projects" / "-tmp-demo").glob("1111*.jsonl"))


def test_a_fixed_line_resolves_its_reject_and_a_new_bad_one_does_not(make_store, home):
    store = make_store()
    path = main_file(home)
    good = path.read_bytes()
    lines = good.split(b"\n")
    path.write_bytes(b"\n".join([*lines[:3], BAD, *lines[3:]]))
    claude(store, home)
    assert rejects(store) == [("line 4 (byte 520)", False)]

    path.write_bytes(good)  # the line was repaired: the file is read again from the start
    claude(store, home)
    assert rejects(store) == [("line 4 (byte 520)", True)]

    with path.open("ab") as f:  # a bad line appended later is a new, unresolved reject
        f.write(BAD + b"\n")
    claude(store, home)
    (resolved, new) = sorted(store.rows("rejects"), key=lambda r: r["resolved_at"] is None)
    assert resolved["resolved_at"] is not None and new["resolved_at"] is None


def test_an_appended_read_leaves_earlier_rejects_alone(make_store, home):
    store = make_store()
    path = main_file(home)
    with path.open("ab") as f:
        f.write(BAD + b"\n")
    claude(store, home)
    with path.open("ab") as f:  # only the new bytes are read: line 42's reject still stands
        f.write(path.read_bytes().split(b"\n")[0] + b"\n")
    claude(store, home)
    assert [resolved for _, resolved in rejects(store)] == [False]


def test_a_directory_listed_again_resolves_its_reject(make_store, home, monkeypatch):
    store = make_store()
    project = str(home / ".claude" / "projects" / "-tmp-demo")
    real = os.scandir

    def scandir(path: Any) -> Any:
        if str(path) == project:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    claude(store, home)
    assert rejects(store) == [("directory", False)]
    monkeypatch.setattr(os, "scandir", real)
    claude(store, home)
    assert rejects(store) == [("directory", True)]


def test_a_repaired_cursor_bubble_resolves_its_reject(make_store, tmp_path):
    store = make_store()
    user = tmp_path / "Cursor" / "User"
    db = user / "globalStorage" / "state.vscdb"
    conn = new_db(db)
    split(conn, "c1", 10, [bubble("b1", 1, "hello"), bubble("b2", 2, "hi")])
    put(conn, "cursorDiskKV", "bubbleId:c1:b2", "{broken")
    conn.close()
    options = SyncOptions(sources={"cursor": [user]})
    sync(store, options)
    assert rejects(store) == [("bubbleId:c1:b2", False)]
    conn = sqlite3.connect(db)
    put(conn, "cursorDiskKV", "bubbleId:c1:b2", bubble("b2", 2, "hi"))
    conn.commit()
    conn.close()
    sync(store, options)
    assert rejects(store) == [("bubbleId:c1:b2", True)]
