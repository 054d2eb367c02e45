"""A temp home in the real Claude layout, replicated with fresh ids, and ledger snapshots."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import DATA
from tests.store.factory import WHEN
from tracehouse.pipeline.options import SyncOptions, SyncReport
from tracehouse.pipeline.sync import sync
from tracehouse.store.protocol import SessionStore

HOME = DATA / "claude" / "home"
MAIN = "11111111-1111-4111-8111-111111111111"
LEDGER_TABLES = ("sessions", "turns", "messages", "tool_calls", "message_sources")


def make_home(tmp_path: Path, copies: int = 1) -> Path:
    """The fixture home; with copies > 1, each project copy gets fresh session and agent ids."""
    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    source = home / ".claude" / "projects" / "-tmp-demo"
    for n in range(1, copies):
        dest = source.with_name(f"-tmp-demo-{n}")
        shutil.copytree(source, dest)
        new_main = f"{n:08d}-1111-4111-8111-111111111111"
        for path in sorted(dest.rglob("*"), key=lambda p: -len(p.parts)):
            if MAIN in path.name:
                path.rename(path.with_name(path.name.replace(MAIN, new_main)))
        for path in dest.rglob("*.jsonl"):
            path.write_bytes(path.read_bytes().replace(MAIN.encode(), new_main.encode()))
    return home


def synced_ledger(tmp_path: Path) -> Path:
    """A SQLite ledger of the fixture home, as `tracehouse sync backfill` makes it (with the
    default settings: its vectors too)."""
    from typer.testing import CliRunner

    from tracehouse.cli.app import app

    path = tmp_path / "ledger.db"
    argv = ["sync", "backfill", "--home", str(make_home(tmp_path)), "--store", str(path), "-q"]
    synced = CliRunner().invoke(app, argv)
    assert synced.exit_code == 0, synced.output
    return path


def main_file(home: Path) -> Path:
    return home / ".claude" / "projects" / "-tmp-demo" / f"{MAIN}.jsonl"


def backfill(store: SessionStore, home: Path, **options: Any) -> SyncReport:
    return sync(store, SyncOptions(sources={"claude-code": [home / ".claude"]}, **options))


def snapshot(store: SessionStore) -> dict[str, list[dict[str, Any]]]:
    """The ledger, row for row, without the columns that record when a store saw a row."""
    out = {
        t: [{k: v for k, v in row.items() if k not in WHEN} for row in store.rows(t)]
        for t in LEDGER_TABLES
    }
    out["watermarks"] = [
        {"unit": w["unit_key"], "cursor": w["cursor"]} for w in store.rows("watermarks")
    ]
    return out


def tree_state(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under root with its content hash and mtime: sources must stay untouched."""
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
