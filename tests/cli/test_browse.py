"""`tracehouse browse` driven by Textual's pilot at 80×24 and in a large terminal: the list,
search as you type, the transcript, and the keys that act on a session."""

from __future__ import annotations

import asyncio
from contextlib import nullcontext
from pathlib import Path

import pytest
from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Input
from typer.testing import CliRunner

from tests.pipeline.helpers import synced_ledger
from tracehouse.store import open_store
from tracehouse.store.protocol import SessionStore
from tracehouse.tui.browse import Browse
from tracehouse.tui.readers import LedgerReader
from tracehouse.tui.transcript_view import TranscriptView

runner = CliRunner()


def _browse(store: SessionStore, ledger: Path) -> Browse:
    return Browse(LedgerReader(store, str(ledger)), str(ledger))


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    return synced_ledger(tmp_path)


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
def test_browse_lists_searches_and_opens(ledger: Path, size: tuple[int, int]) -> None:
    store = open_store(ledger)

    async def drive() -> None:
        browse = _browse(store, ledger)
        async with browse.run_test(size=size) as pilot:
            table = browse.query_one("#list", DataTable)
            assert table.row_count > 0
            transcript = browse.query_one("#transcript", TranscriptView)
            assert "session " in transcript.text  # the first session, opened
            await pilot.press("/")
            assert isinstance(browse.focused, Input)
            await pilot.press(*"ZeroDivisionError")
            await pilot.pause(0.5)
            assert table.row_count > 0 and "ZeroDivisionError" in transcript.text
            await pilot.press("enter")  # to the list
            await pilot.press("r")
            assert browse.last_hint and browse.last_hint.startswith("tracehouse resume")
            await pilot.press("t")
            assert browse.thinking
            await pilot.press("escape")
            await pilot.pause(0.5)
            assert browse.query_one("#query", Input).value == ""
            await pilot.press("down")
            await pilot.pause()
            assert browse.shown is not None and browse.shown == browse.rows[1]
            await pilot.press("q")

    try:
        asyncio.run(drive())
    finally:
        store.close()


def test_a_search_still_being_typed_is_no_error(ledger: Path) -> None:
    store = open_store(ledger)

    async def drive() -> None:
        browse = _browse(store, ledger)
        async with browse.run_test(size=(80, 24)) as pilot:
            await pilot.press("/", "-")
            await pilot.pause(0.5)  # `-` alone excludes nothing: said, the list stays
            assert browse.query_one("#list", DataTable).row_count > 0
            await pilot.press("q")

    try:
        asyncio.run(drive())
    finally:
        store.close()


def test_a_search_pause_that_ends_as_browse_quits_is_no_error(ledger: Path) -> None:
    """The pause after a key ends on a timer; quitting takes the search box away first, and a
    busy machine can run the timer between the two (a failure seen under load)."""
    store = open_store(ledger)

    async def drive() -> None:
        browse = _browse(store, ledger)
        async with browse.run_test(size=(80, 24)) as pilot:
            await pilot.press("/", "x")
            await browse.query_one("#query", Input).remove()
            browse._searched("x")  # what the timer calls
            await pilot.press("q")

    try:
        asyncio.run(drive())
    finally:
        store.close()


def _pressed(ledger: Path, *keys: str) -> Browse:
    """Browse at 80×24 after `keys` and `q`, as it was when it quit."""
    store = open_store(ledger)

    async def drive() -> Browse:
        browse = _browse(store, ledger)
        async with browse.run_test(size=(80, 24)) as pilot:
            await pilot.press(*keys, "q")
        return browse

    try:
        return asyncio.run(drive())
    finally:
        store.close()


def test_the_views_o_opened_stop_with_browse(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []

    class Process:
        def __init__(self, command: list[str], **_: object) -> None:
            started.append(command)
            self.stopped = False

        def terminate(self) -> None:
            self.stopped = True

        def wait(self, timeout: float) -> int:
            return 0

    monkeypatch.setattr("tracehouse.tui.browse.subprocess.Popen", Process)
    browse = _pressed(ledger, "o")
    label = browse.rows[0].label
    assert started and started[0][-5:] == ["open", "--store", str(ledger), "--", label]
    assert all(p.stopped for p in browse.opened)  # type: ignore[attr-defined]


def test_shift_r_runs_the_resume_command_it_shows(
    ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr("tracehouse.tui.browse.subprocess.run", lambda argv, **_: ran.append(argv))
    monkeypatch.setattr(Browse, "suspend", lambda self: nullcontext())  # the pilot has no tty
    browse = _pressed(ledger, "R")
    assert browse.last_hint and ran and ran[0][:2] == ["tracehouse", "resume"]


def test_what_the_ledger_holds_is_shown_not_interpreted(ledger: Path) -> None:
    import sqlite3

    with sqlite3.connect(ledger) as conn:
        conn.execute("UPDATE sessions SET title = '[bold red]owned[/] \x1b[2J' WHERE label = ?",
                     ("cc-11111111",))  # fmt: skip
    store = open_store(ledger)

    async def drive() -> list[object]:
        browse = _browse(store, ledger)
        async with browse.run_test(size=(200, 30)) as pilot:
            table = browse.query_one("#list", DataTable)
            shown = [table.get_cell_at(Coordinate(r, 6)) for r in range(table.row_count)]
            await pilot.press("q")
        return shown

    try:
        titles = asyncio.run(drive())
    finally:
        store.close()
    # a Text the table shows as it is: a string it would read as markup
    assert all(isinstance(t, Text) for t in titles)
    assert any("[bold red]owned[/]" in t.plain and "\x1b" not in t.plain for t in titles)  # type: ignore[attr-defined]
