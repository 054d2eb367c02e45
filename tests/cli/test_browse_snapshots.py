"""`tracehouse browse` as a person sees it, compared with the screens kept beside this file
(pytest-textual-snapshot): at 80×24 in the dark theme, and a session's family at 120×36 in the
light one. After a change meant to alter them, `uv run pytest tests/cli/test_browse_snapshots.py
--snapshot-update` writes them again: look at the SVGs before committing."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.helpers import synced_ledger
from tracehouse.store import open_store
from tracehouse.tui.browse import Browse
from tracehouse.tui.readers import LedgerReader


@pytest.fixture
def browse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Browse over the fixture home's ledger, its times in UTC and neither a temporary path nor
    this machine's name on it, so the screens are the same on every machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    # the costs fill in a moment after the first screen, whenever the machine gets to it: not
    # in these screens (another test shows them)
    monkeypatch.setattr("tracehouse.tui.browse.COSTS_AFTER", 3600)
    ledger = synced_ledger(tmp_path)
    with sqlite3.connect(ledger) as conn:  # the home the fixture was read from, one for all
        conn.execute("UPDATE sessions SET source_path = replace(source_path, ?, '/home/me')",
                     (str(tmp_path / "home"),))  # fmt: skip
        conn.execute("UPDATE sessions SET host = 'laptop'")  # not this machine's name
    store = open_store(ledger)

    def made(theme: str) -> Browse:
        return Browse(LedgerReader(store, "ledger.db"), "ledger.db", theme)

    yield made
    store.close()
    monkeypatch.undo()
    time.tzset()


def test_the_first_screen_at_80x24(browse: Any, snap_compare: Any) -> None:
    assert snap_compare(browse("textual-dark"), terminal_size=(80, 24))


def test_a_family_in_the_light_theme(browse: Any, snap_compare: Any) -> None:
    async def to_family(pilot: Any) -> None:
        app = pilot.app
        main = next(n for n, r in enumerate(app.rows) if r.label == "cc-11111111")
        app.query_one("#list").move_cursor(row=main)
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()

    assert snap_compare(browse("textual-light"), terminal_size=(120, 36), run_before=to_family)
