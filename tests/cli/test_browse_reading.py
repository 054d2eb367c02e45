"""`tracehouse browse` beyond the list: a session's family (parent, subagents) to walk through,
the Markdown export key, the same app over a gateway with a read token, and its options."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable
from typer.testing import CliRunner

from tests.gateway.server import pushed_gateway
from tests.pipeline.helpers import make_home, synced_ledger
from tracehouse.cli.app import app
from tracehouse.errors import StoreError
from tracehouse.store import open_store
from tracehouse.store.remote.store import address_with
from tracehouse.tui.browse import Browse
from tracehouse.tui.readers import GatewayReader, LedgerReader, Listing, Reader

MAIN_LABEL = "cc-11111111"


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    return synced_ledger(tmp_path)


def drive(reader: Reader, steps: Callable[[Browse, Any], Any]) -> Browse:
    """Browse over `reader` at 100×30, `steps(browse, pilot)` run, then quit."""

    async def run() -> Browse:
        browse = Browse(reader, "")
        async with browse.run_test(size=(100, 30)) as pilot:
            await steps(browse, pilot)
            await pilot.press("q")
        return browse

    try:
        return asyncio.run(run())
    finally:
        reader.close()


async def to_session(browse: Browse, pilot: Any, label: str) -> None:
    table = browse.query_one("#list", DataTable)
    row = next(n for n, r in enumerate(browse.rows) if r.label == label)
    table.move_cursor(row=row)
    await pilot.pause()


def test_f_walks_from_a_session_to_its_subagents_and_back(ledger: Path) -> None:
    seen: dict[str, list[str]] = {}

    async def steps(browse: Browse, pilot: Any) -> None:
        seen["sessions"] = [r.label for r in browse.rows]
        await to_session(browse, pilot, MAIN_LABEL)
        await pilot.press("f")
        seen["family"] = [r.label for r in browse.rows]
        child = next(r for r in browse.rows if r.label != MAIN_LABEL)
        await to_session(browse, pilot, child.label)
        await pilot.press("f")  # from the subagent: its parent above it
        seen["child's"] = [r.label for r in browse.rows]
        seen["marks"] = [str(browse.query_one("#list", DataTable).get_row_at(0)[0])]
        await pilot.press("escape")
        seen["back"] = [r.label for r in browse.rows]

    drive(LedgerReader(open_store(ledger), str(ledger)), steps)
    assert seen["family"][0] == MAIN_LABEL and len(seen["family"]) >= 2
    assert seen["child's"][0] == MAIN_LABEL and seen["marks"][0].startswith("↑ ")
    assert seen["back"] == seen["sessions"]


def test_e_exports_the_session_as_markdown_once(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    said: list[str] = []

    async def steps(browse: Browse, pilot: Any) -> None:
        await to_session(browse, pilot, MAIN_LABEL)
        for _ in range(2):
            await pilot.press("e")
            said.append(str(browse.query_one("#status").render()))

    drive(LedgerReader(open_store(ledger), str(ledger)), steps)
    written = out / f"{MAIN_LABEL}.md"
    assert written.read_text().startswith("# ") and "ZeroDivisionError" in written.read_text()
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert said[0].startswith("exported cc-11111111") and "exists" in said[1]  # never overwritten


def test_a_label_of_another_shape_never_names_the_file(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    with sqlite3.connect(ledger) as conn:
        conn.execute("UPDATE sessions SET label = '../../escape' WHERE label = ?", (MAIN_LABEL,))
    monkeypatch.chdir(tmp_path)

    async def steps(browse: Browse, pilot: Any) -> None:
        await to_session(browse, pilot, "../../escape")
        await pilot.press("e")

    drive(LedgerReader(open_store(ledger), str(ledger)), steps)
    assert [p.name for p in tmp_path.glob("session-*.md")]
    assert not (tmp_path.parent.parent / "escape.md").exists()


def test_browse_reads_a_gateway_with_a_read_token(tmp_path: Path) -> None:
    gateway, _pusher, token = pushed_gateway(make_home(tmp_path), tmp_path)
    seen: dict[str, Any] = {}

    async def steps(browse: Browse, pilot: Any) -> None:
        seen["listed"] = [r.label for r in browse.rows]
        await to_session(browse, pilot, MAIN_LABEL)
        seen["text"] = browse.query_one("#transcript").text  # type: ignore[attr-defined]
        await pilot.press("f")
        seen["family"] = len(browse.rows)
        await pilot.press("escape", "/", *"ZeroDivisionError")
        await pilot.pause(0.6)
        seen["hits"] = [r.at for r in browse.rows]
        await pilot.press("enter", "r")
        seen["hint"] = browse.last_hint

    try:
        reader = GatewayReader(address_with(gateway.url, token, "laptop"))
        assert reader.shown == gateway.url and not reader.local
        drive(reader, steps)
    finally:
        gateway.stop()
    assert MAIN_LABEL in seen["listed"] and "ZeroDivisionError" in seen["text"]
    assert seen["family"] >= 2 and seen["hits"] and any(seen["hits"])
    assert seen["hint"] and seen["hint"].startswith("tracehouse resume")


def test_an_answer_of_another_shape_is_an_error_naming_the_route(tmp_path: Path) -> None:
    reader = GatewayReader.__new__(GatewayReader)
    reader.shown = "http://127.0.0.1:1"
    reader.gateway = type("G", (), {"call": lambda self, m, p: {"sessions": [{"no": 1}]}})()
    with pytest.raises(StoreError, match=r"/v1/sessions: an answer of another shape"):
        reader.sessions(Listing())


def test_the_options_are_checked_where_they_enter(ledger: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["browse", "--store", str(ledger), "--theme", "neon"])
    assert bad.exit_code != 0 and "--theme 'neon': one of textual-dark" in bad.output
    stray = runner.invoke(app, ["browse", "--store", str(ledger), "--token-file", "t"])
    assert stray.exit_code != 0 and "only with a gateway" in stray.output
    no_token = runner.invoke(app, ["browse", "--store", "http://127.0.0.1:9"])
    assert no_token.exit_code != 0 and "a read token to browse" in no_token.output


def test_s_orders_the_sessions_and_the_costs_fill_in(ledger: Path) -> None:
    seen: dict[str, Any] = {}

    async def steps(browse: Browse, pilot: Any) -> None:
        table = browse.query_one("#list", DataTable)
        for _ in range(100):  # filled in once the first screen is drawn
            await pilot.pause(0.1)
            seen["costs"] = [str(table.get_cell(r.session_id, "cost")) for r in browse.rows]
            if any(seen["costs"]):
                break
        await pilot.press("s", "s")  # updated → created → tokens
        seen["order"] = browse.listing.order
        seen["tokens"] = [int(str(table.get_cell(r.session_id, "tokens")).replace(",", ""))
                          for r in browse.rows]  # fmt: skip

    drive(LedgerReader(open_store(ledger), str(ledger)), steps)
    assert any(c.startswith("$") for c in seen["costs"])  # the fixture's models have prices
    assert seen["order"] == "tokens" and seen["tokens"] == sorted(seen["tokens"], reverse=True)

    only = Browse(LedgerReader(open_store(ledger), str(ledger)), "", None,
                  Listing(providers=("codex",)))  # fmt: skip
    assert only.listing.providers == ("codex",)

    async def listed() -> int:
        async with only.run_test(size=(100, 30)) as pilot:
            count = len(only.rows)
            await pilot.press("q")
        return count

    try:
        assert asyncio.run(listed()) == 0  # the fixture home holds Claude Code only
    finally:
        only.reader.close()
