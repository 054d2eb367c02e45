"""The Cursor source on databases built here in every generation's shape, then its own rules:
reading order, lineage, drafts, workspaces, incremental reads and read-only access."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from tests.pipeline.helpers import tree_state
from tests.sources.cursor_dbs import bad_global, bubble, make_user_dir, put
from tests.sources.suite import SourceSuite, parse_all_items
from tracehouse.model import ids
from tracehouse.parsers import cursor
from tracehouse.parsers.base import ParseOptions, Unit
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory):
    return make_user_dir(tmp_path_factory.mktemp("cursor-home"))


@pytest.fixture
def parser():
    return cursor


@pytest.fixture
def units(user_dir):
    return cursor.discover([user_dir])


@pytest.fixture
def bad_unit(tmp_path):
    path = bad_global(tmp_path)
    return cursor.discover([path.parent.parent])[0]


class TestCursorContract(SourceSuite):
    reject_locations = ("composerData:", "bubbleId:")


def sessions(units) -> dict[str, tuple]:
    """source id → (item, its messages in order, its tool calls) over all units."""
    out = {}
    for unit in units:
        items, frames, _ = parse_all_items(cursor, unit)
        for item in items:
            sid = item.session_id
            messages = frames["messages"].filter(frames["messages"]["session_id"] == sid)
            calls = frames.get("tool_calls")
            calls = calls.filter(calls["session_id"] == sid) if calls is not None else None
            out[item.source_session_id] = (
                item,
                messages.sort("seq").to_dicts(),
                [] if calls is None else calls.sort("seq").to_dicts(),
            )
    return out


def test_discovery_finds_global_and_workspaces_not_backups(units, user_dir):
    keys = [u.key for u in units]
    assert len(keys) == 4
    assert not any(k.endswith(".backup") for k in keys)
    by_id = {u.info.get("workspace_id"): u for u in units}
    assert by_id["a1b2c3"].info["workspace"] == "/home/dev/my project"
    assert by_id["d4e5f6"].info["workspace"] == "vscode-remote://ssh-remote%2Bbox/srv/app"


def test_every_generation_becomes_sessions_and_drafts_do_not(units):
    found = sessions(units)
    assert set(found) == {
        "tab-1",
        "c1-inline",
        "c1-wal",
        "c2-inline",
        "c3-split",
        "c4-parent",
        "c4-child",
        "c5-new",
    }
    generations = {
        sid: item.session["metadata"]["generation"] for sid, (item, _, _) in found.items()
    }
    assert generations["tab-1"] == "C0" and generations["c1-inline"] == "C1"
    assert generations["c2-inline"] == "C2" and generations["c3-split"] == "C3"
    assert generations["c4-parent"] == "C4" and generations["c5-new"] == "C5"


def test_bubbles_follow_the_headers_not_rowid_or_key(units):
    _item, messages, calls = sessions(units)["c3-split"]
    assert [m["source_message_id"] for m in messages] == ["z1", "y2", "x3", "w4"]
    assert messages[2]["thinking"] == "Look at the listing."
    assert [c["tool_name"] for c in calls] == ["list_dir", "run_terminal_cmd"]
    assert json.loads(calls[0]["params"]) == {"relative_workspace_path": "src"}
    assert calls[0]["status"] == "completed" and calls[0]["message_id"] == messages[1]["message_id"]
    assert calls[1]["status"] == "failed" and calls[1]["error"] == "exit 2"


def test_texts_times_tokens_and_models(units):
    found = sessions(units)
    item, messages, _ = found["c4-parent"]
    assert messages[0]["content"] == "rename @utils"  # from richText (Lexical)
    assert messages[0]["created_at"] == "2025-10-01T10:00:00.000Z"
    assert item.session["model"] == "gpt-5"
    item, messages, _ = found["c2-inline"]
    assert messages[1]["created_at"] == "2025-06-15T15:06:41.000Z"  # timingInfo, ms
    assert (item.session["input_tokens"], item.session["output_tokens"]) == (120, 30)
    item, messages, _ = found["tab-1"]
    assert [m["content"] for m in messages] == ["what does this regex do?", "It matches dates."]
    assert item.session["title"] == "Old chat"


def test_c3_bubbles_take_their_absolute_timing_fields(units):
    item, messages, calls = sessions(units)["c3-split"]
    sent = "2025-06-15T15:07:40.000Z"  # clientRpcSendTime; clientStartTime is a relative clock
    assert messages[1]["created_at"] == sent and calls[0]["started_at"] == sent
    assert messages[0]["created_at"] == sent  # the prompt left when its answer was requested
    assert messages[2]["created_at"] is None  # no time of its own: none is made up
    assert item.session["updated_at"] >= "2025-06-15T15:07:43.000Z"  # clientEndTime


def test_an_unlisted_error_bubble_is_placed_by_time_as_a_host_notice(units):
    _item, messages, _ = sessions(units)["c5-new"]
    assert [m["message_type"] for m in messages] == ["user", "host", "assistant"]
    assert messages[1]["content"] == "Usage limit: Upgrade"
    assert messages[1]["model"] is None  # the host wrote it, whatever model the bubble names


def test_workspaces_come_from_the_workspace_dbs_and_the_c5_headers(units):
    found = sessions(units)
    assert found["c3-split"][0].session["workspace_path"] == "/home/dev/my project"
    assert found["c5-new"][0].session["workspace_path"] == "/home/dev/c5-project"
    assert found["c1-wal"][0].session["workspace_path"] == "/home/dev/wal"


def test_a_best_of_n_child_is_linked_to_its_parent(units, tmp_path):
    store = SqliteStore(tmp_path / "l.db")
    roots = sorted({u.root for u in units})
    sync(store, SyncOptions(sources={"cursor": [__import__("pathlib").Path(r) for r in roots]}))
    (child,) = store.query("SELECT * FROM sessions WHERE source_session_id = 'c4-child'")
    assert child["is_subagent"] == 1
    assert child["parent_session_id"] == ids.session_id("cursor", "c4-parent")
    assert child["spawn_tool_call_id"] is not None
    store.close()


def test_the_wal_only_database_is_read_in_full(units):
    wal_unit = next(u for u in units if u.info.get("workspace_id") == "0a0b0c")
    with open(wal_unit.key, "rb") as f:
        assert b"only in the WAL" not in f.read()  # the rows are in the -wal alone
    _item, messages, _ = sessions([wal_unit])["c1-wal"]
    assert [m["content"] for m in messages] == ["only in the WAL", "Read anyway."]


def test_sources_are_untouched_and_nothing_appears_beside_them(user_dir, tmp_path):
    before = tree_state(user_dir)
    store = SqliteStore(tmp_path / "l.db")
    options = SyncOptions(sources={"cursor": [user_dir]})
    assert sync(store, options).ok
    assert sync(store, SyncOptions(sources={"cursor": [user_dir]}, full=True)).ok
    assert tree_state(user_dir) == before
    assert "SECRET-TOKEN" not in json.dumps(list(store.rows("sessions")), default=str)
    store.close()


def test_a_rerun_reads_nothing_and_a_new_bubble_writes_only_itself(tmp_path):
    user = make_user_dir(tmp_path / "home")
    store = SqliteStore(tmp_path / "l.db")
    first = sync(store, SyncOptions(sources={"cursor": [user]}))
    assert first.statuses["imported"] == 8
    again = sync(store, SyncOptions(sources={"cursor": [user]}))
    assert again.unchanged == again.units and again.rows_written == 0
    conn = sqlite3.connect(user / "globalStorage" / "state.vscdb", isolation_level=None)
    (value,) = conn.execute(
        "SELECT value FROM cursorDiskKV WHERE key = 'composerData:c4-parent'"
    ).fetchone()
    data = json.loads(value)
    data["fullConversationHeadersOnly"].append({"bubbleId": "a3", "type": 1})
    put(conn, "cursorDiskKV", "bubbleId:c4-parent:a3", bubble("a3", 1, "one more thing"))
    put(conn, "cursorDiskKV", "composerData:c4-parent", data)
    conn.close()
    time.sleep(0.01)
    third = sync(store, SyncOptions(sources={"cursor": [user]}))
    assert third.statuses == {"upserted": 1}
    assert third.rows_written == 3  # the session row, the new message and its new turn
    assert [
        r["content"]
        for r in store.query(
            "SELECT content FROM messages WHERE session_id = ? ORDER BY seq",
            [ids.session_id("cursor", "c4-parent")],
        )
    ][-1] == "one more thing"
    store.close()


def test_a_composer_the_store_refused_is_retried_on_the_next_run(tmp_path):
    user = make_user_dir(tmp_path / "home")
    store = SqliteStore(tmp_path / "l.db")
    refused = ids.session_id("cursor", "c4-parent")
    with store.transaction() as conn:  # the ledger refuses one composer's messages, once
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON messages"
            f" WHEN NEW.session_id = '{refused}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
    first = sync(store, SyncOptions(sources={"cursor": [user]}))
    assert first.statuses == {"imported": 7, "failed": 1}
    with store.transaction() as conn:
        conn.execute("DROP TRIGGER refuse")
    again = sync(store, SyncOptions(sources={"cursor": [user]}))  # the database is unchanged
    # only the refused composer's database is read again; its other composers are skipped
    assert again.statuses == {"imported": 1, "skipped": 4}
    (row,) = store.query("SELECT count(*) AS n FROM messages WHERE session_id = ?", [refused])
    assert row["n"] > 0
    third = sync(store, SyncOptions(sources={"cursor": [user]}))  # all in: nothing is read
    assert third.unchanged == third.units and third.rows_written == 0
    store.close()


def test_an_unreadable_database_is_one_reject_and_nothing_else(tmp_path):
    path = tmp_path / "User" / "globalStorage" / "state.vscdb"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    (unit,) = cursor.discover([tmp_path / "User"])
    result = cursor.parse(unit, None, ParseOptions(now=time.time()))
    assert [r.location for r in result.rejects] == ["database"]
    assert result.watermark is None and not result.extra


def test_unit_for_maps_wal_files_to_their_database(user_dir):
    wal = str(user_dir / "workspaceStorage" / "0a0b0c" / "state.vscdb-wal")
    unit = cursor.unit_for(wal, [user_dir])
    assert isinstance(unit, Unit) and unit.key == wal.removesuffix("-wal")
    assert (
        cursor.unit_for(str(user_dir / "globalStorage" / "state.vscdb.backup"), [user_dir]) is None
    )


def test_an_in_place_update_below_the_window_is_caught_by_reconciliation(tmp_path, monkeypatch):
    import importlib

    cursor_parse = importlib.import_module("tracehouse.parsers.cursor.reader")
    cursor_discover = importlib.import_module("tracehouse.parsers.cursor.discover")
    user = make_user_dir(tmp_path / "home")
    store = SqliteStore(tmp_path / "l.db")
    sync(store, SyncOptions(sources={"cursor": [user]}))
    monkeypatch.setattr(cursor_parse, "WINDOW", 0)
    conn = sqlite3.connect(user / "globalStorage" / "state.vscdb", isolation_level=None)
    edited = json.dumps(bubble("x3", 2, "There are two files."))
    conn.execute("UPDATE cursorDiskKV SET value = ? WHERE key = 'bubbleId:c3-split:x3'", (edited,))
    conn.close()  # same rowid: invisible to the rowid fast path
    assert sync(store, SyncOptions(sources={"cursor": [user]})).rows_written == 0
    # The plan (discover.py) and the read (reader.py) both ask whether an hour has passed.
    monkeypatch.setattr(cursor_parse, "RECONCILE_SECONDS", 0.0)
    monkeypatch.setattr(cursor_discover, "RECONCILE_SECONDS", 0.0)
    report = sync(store, SyncOptions(sources={"cursor": [user]}))
    assert report.statuses == {"upserted": 1}
    contents = [r["content"] for r in store.query("SELECT content FROM messages")]
    assert "There are two files." in contents
    store.close()


def write_while_read(path: str, seconds: float) -> None:
    """A writer in WAL mode adding composers, each with its bubbles, in one transaction."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=100")  # checkpoints while the reader copies
    deadline, n = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        cid = f"live-{n:05d}"
        bids = [f"b{i}" for i in range(5)]
        conn.execute("BEGIN IMMEDIATE")
        put(
            conn,
            "cursorDiskKV",
            f"composerData:{cid}",
            {
                "_v": 10,
                "composerId": cid,
                "createdAt": 1_750_000_000_000 + n,
                "fullConversationHeadersOnly": [{"bubbleId": b, "type": 1} for b in bids],
            },
        )
        for i, b in enumerate(bids):
            put(conn, "cursorDiskKV", f"bubbleId:{cid}:{b}", bubble(b, 1 + i % 2, "x" * 2000))
        conn.execute("COMMIT")
        n += 1
        time.sleep(0.002)  # an editor writes in bursts, not in one unbroken stream
    conn.close()


@pytest.mark.slow
def test_a_database_being_written_is_read_consistently(tmp_path):
    import multiprocessing

    from tests.sources.cursor_dbs import new_db

    user = tmp_path / "User"
    path = user / "globalStorage" / "state.vscdb"
    new_db(path).close()
    writer = multiprocessing.get_context("spawn").Process(
        target=write_while_read, args=(str(path), 3.0)
    )
    writer.start()
    snapshots, composers = 0, 0
    try:
        # Read once the writer has switched the database to WAL, the case this test is about:
        # on a loaded machine its start-up took longer than a fixed wait, and an in-place read
        # that saw the switch happen failed (a database that changes journal mode mid-read).
        deadline = time.monotonic() + 30
        while path.read_bytes()[18:19] != b"\x02" and time.monotonic() < deadline:
            time.sleep(0.02)
        (unit,) = cursor.discover([user])
        while writer.is_alive():
            result = cursor.parse(unit, None, ParseOptions(now=time.time()))
            assert result.rejects == []  # no composer lists a bubble the snapshot lacks
            for item in result.extra:
                assert item.session["message_count"] == 5
            snapshots += 1
            composers = max(composers, len(result.extra))
    finally:
        writer.join(timeout=30)
    assert snapshots >= 3 and composers > 0


def test_workspace_dbs_are_looked_up_once_per_composer(tmp_path, monkeypatch):
    import importlib

    cursor_parse = importlib.import_module("tracehouse.parsers.cursor.reader")
    lookups: list[set[str]] = []
    real = cursor_parse._workspace_heads
    monkeypatch.setattr(
        cursor_parse,
        "_workspace_heads",
        lambda user, wanted: lookups.append(wanted) or real(user, wanted),
    )
    user = make_user_dir(tmp_path / "home")
    store = SqliteStore(tmp_path / "l.db")
    sync(store, SyncOptions(sources={"cursor": [user]}))
    assert "c3-split" in lookups[0]
    conn = sqlite3.connect(user / "globalStorage" / "state.vscdb", isolation_level=None)
    key = "composerData:c3-split"
    data = json.loads(
        conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()[0]
    )
    put(conn, "cursorDiskKV", key, {**data, "name": "Renamed"})
    conn.close()
    assert sync(store, SyncOptions(sources={"cursor": [user]})).statuses == {"upserted": 1}
    assert len(lookups) == 1  # the rename did not open the workspace DBs again
    (row,) = store.query(
        "SELECT title, workspace_path FROM sessions WHERE source_session_id = 'c3-split'"
    )
    assert row == {"title": "Renamed", "workspace_path": "/home/dev/my project"}
    store.close()


def test_a_composer_read_between_its_headers_and_its_rows_gets_no_extra_turn(tmp_path):
    """Cursor lists a bubble in the composer's headers before it writes the bubble's row; `sync
    live` can read in between. The turns follow the headers, so the ledger that read the answer
    before its question equals the one a later, whole read gives (issue #40: a phantom turn)."""
    from tests.sources.cursor_dbs import composer, new_db

    user = tmp_path / "home" / "User"
    path = user / "globalStorage" / "state.vscdb"
    conn = new_db(path)
    put(conn, "cursorDiskKV", "composerData:c1", composer("c1", 10, ["u1", "a1"]))
    put(conn, "cursorDiskKV", "bubbleId:c1:a1", bubble("a1", 2, "the answer"))
    conn.close()
    store = SqliteStore(tmp_path / "live.db")
    early = sync(store, SyncOptions(sources={"cursor": [user]}))
    assert [r.location for r in early.rejects] == ["bubbleId:c1:u1"]  # no row yet
    conn = sqlite3.connect(path)
    put(conn, "cursorDiskKV", "bubbleId:c1:u1", bubble("u1", 1, "the question"))
    conn.commit()
    conn.close()
    assert sync(store, SyncOptions(sources={"cursor": [user]})).rejects == []
    whole = SqliteStore(tmp_path / "whole.db")
    sync(whole, SyncOptions(sources={"cursor": [user]}))
    for table in ("turns", "messages", "threads"):
        assert _content(store, table) == _content(whole, table), table
    store.close()
    whole.close()


def _content(store: SqliteStore, table: str) -> list[str]:
    """A table's rows without the times of their import."""
    return sorted(repr({k: v for k, v in r.items() if not k.endswith("imported_at")})
                  for r in store.rows(table))  # fmt: skip
