"""Every real Cursor database in $TRACEHOUSE_CORPUS: read without a crash; every composer or
chat tab with content is a session whose bubbles follow the composer's headers; whatever is
skipped is a reject; the WAL-only database is read in full; the sources stay byte-identical
with nothing new beside them."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import orjson
import pytest

from tests.pipeline.helpers import tree_state
from tracehouse.parsers import cursor
from tracehouse.parsers.base import ParseOptions
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.corpus


def user_dirs(corpus: Path) -> list[Path]:
    return sorted(p for p in (corpus / "homes").glob("*/.config/Cursor/User") if p.is_dir())


def private_copy(db: str, into: Path) -> sqlite3.Connection:
    """The test's own view of a database: its files copied, never opened where they are."""
    into.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        if Path(db + suffix).exists():
            shutil.copyfile(db + suffix, into / f"state.vscdb{suffix}")
    return sqlite3.connect(into / "state.vscdb")


def expected_conversations(conn: sqlite3.Connection) -> dict[str, tuple[list[str], set[str]]]:
    """Independently of the parser: composer / tab id → the ids of its bubbles that say
    something (text, rich text, thinking, a tool call, an error), in header (or inline) order,
    and those of bubble rows that say something but that the headers do not list."""

    def says(b: dict) -> bool:
        return bool(
            (b.get("text") or "").strip()
            or b.get("richText")
            or b.get("rawText")
            or (b.get("delegate") or {}).get("a")
            or b.get("thinking")
            or (b.get("toolFormerData") or {}).get("name")
            or b.get("errorDetails")
        )

    out: dict[str, tuple[list[str], set[str]]] = {}
    try:
        rows = conn.execute(
            "SELECT key, value FROM cursorDiskKV WHERE key LIKE 'composerData:%'"
        ).fetchall()
    except sqlite3.OperationalError:
        rows = []
    for key, value in rows:
        if value is None:
            continue
        data = orjson.loads(value)
        cid = key.split(":", 1)[1]
        unlisted: set[str] = set()
        if data.get("fullConversationHeadersOnly"):
            stored = {
                k.rsplit(":", 1)[1]: orjson.loads(v)
                for k, v in conn.execute(
                    "SELECT key, value FROM cursorDiskKV WHERE key LIKE ? AND value IS NOT NULL",
                    (f"bubbleId:{cid}:%",),
                )
            }
            listed = [h["bubbleId"] for h in data["fullConversationHeadersOnly"]]
            ids = [b for b in listed if b in stored and says(stored[b])]
            unlisted = {b for b, v in stored.items() if b not in listed and says(v)}
        else:
            ids = [b["bubbleId"] for b in data.get("conversation") or [] if says(b)]
        if ids or unlisted:
            out[cid] = (ids, unlisted)
    for key, field, id_key in (
        ("workbench.panel.aichat.view.aichat.chatdata", "tabs", "tabId"),
        ("composer.composerData", "allComposers", "composerId"),
    ):
        row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (key,)).fetchone()
        for entry in (orjson.loads(row[0]).get(field) or []) if row and row[0] else []:
            bubbles = entry.get("bubbles") or entry.get("conversation") or []
            ids = [b.get("id") or b.get("bubbleId") for b in bubbles if says(b)]
            if ids:
                out[entry[id_key]] = (ids, set())
    return out


def test_every_conversation_with_content_is_a_session_in_header_order(corpus, tmp_path):
    dbs = [u for d in user_dirs(corpus) for u in cursor.discover([d])]
    assert len(dbs) >= 17
    checked = 0
    for n, unit in enumerate(dbs):
        started = time.perf_counter()
        result = cursor.parse(unit, None, ParseOptions(now=time.time()))
        assert time.perf_counter() - started < 5, unit.key
        expected = expected_conversations(private_copy(unit.key, tmp_path / str(n)))
        got = {item.source_session_id: item for item in result.extra}
        assert set(got) == set(expected), unit.key
        messages = {}
        for row in result.rows.get("messages", []):
            messages.setdefault(row[1], []).append((row[5], row[3]))  # session, (seq, source id)
        for sid, (listed, unlisted) in expected.items():
            order = [source.split(":")[0] for _, source in sorted(messages[got[sid].session_id])]
            assert [b for b in order if b not in unlisted] == listed, (unit.key, sid)
            assert set(order) - set(listed) == unlisted, (unit.key, sid)
            checked += 1
        skipped = [r for r in result.rejects]
        assert all(r.reason for r in skipped)
    assert checked == 51  # 8 global composers with content, 31 + 12 workspace tabs and composers


def test_the_wal_only_database_is_read_in_full(corpus):
    (unit,) = [
        u
        for d in user_dirs(corpus)
        for u in cursor.discover([d])
        if u.key.endswith("096bb641a3fd05bc511b941c5dd59338/state.vscdb")
    ]
    with open(unit.key, "rb") as f:
        assert len(f.read()) == 4096  # the main file holds no table: everything is in the WAL
    from tracehouse.parsers.kit.sqlite_snapshot import read, snapshot

    with snapshot(unit.key) as conn:
        assert read(conn, "SELECT count(*) FROM ItemTable")[0][0] == 57


def test_a_backfill_leaves_every_source_byte_identical(corpus, tmp_path):
    dirs = user_dirs(corpus)
    before = {d: tree_state(d) for d in dirs}
    store = SqliteStore(tmp_path / "l.db")
    report = sync(store, SyncOptions(sources={"cursor": dirs}, workers=0))
    assert report.ok, report.rejects
    assert (
        sync(store, SyncOptions(sources={"cursor": dirs}, full=True, workers=0)).rows_written == 0
    )
    assert {d: tree_state(d) for d in dirs} == before
    assert store.info().row_counts["sessions"] >= 50
    store.close()


def test_backfill_a_cursor_home_and_show_a_composer_with_its_tool_calls(corpus, tmp_path):
    import json

    from typer.testing import CliRunner

    from tracehouse.cli.app import app

    runner = CliRunner()
    home = corpus / "homes" / "Aleksey0x-CursorSync"
    ledger = tmp_path / "l.db"
    done = runner.invoke(app, ["sync", "backfill", "--home", str(home), "--store", str(ledger)])
    assert done.exit_code == 0, done.output
    listed = json.loads(
        runner.invoke(app, ["sessions", "list", "--store", str(ledger), "--json"]).stdout
    )
    composer = next(s for s in listed if s["label"] == "cu-6b4c3d09")
    assert composer["tool_call_count"] == 15
    shown = runner.invoke(app, ["sessions", "show", "cu-6b4c3d09", "--store", str(ledger)])
    assert "workspace  c:/Users/atarax/Desktop/vite" in shown.stdout
    assert "  → run_terminal_cmd {" in shown.stdout
    assert "  → list_dir {" in shown.stdout and "[failed]" in shown.stdout
