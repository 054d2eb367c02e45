"""`sync live` with the real watcher on a temp home: appends (a line in two halves included),
new files and folders, atomic replaces, SIGTERM and SIGKILL mid-burst, the polling observer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

from tests.conftest import REPO
from tests.pipeline.helpers import backfill, main_file, make_home, snapshot
from tracehouse.pipeline.live import LiveOptions, LiveStatus, run_live
from tracehouse.pipeline.options import SyncOptions
from tracehouse.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.slow
WAIT = 10.0


def line(uuid: str, text: str, parent: str = "u7") -> bytes:
    record = {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "timestamp": "2026-03-01T12:00:00.000Z",
        "message": {"role": "user", "content": text},
    }
    return orjson.dumps(record) + b"\n"


@contextmanager
def watching(home: Path, ledger: Path, poll: bool = False) -> Iterator[LiveStatus]:
    store = SqliteStore(ledger)
    stop = threading.Event()
    status = LiveStatus()
    options = SyncOptions(sources={"claude-code": [home / ".claude"]})
    thread = threading.Thread(
        target=lambda: status.__dict__.update(
            run_live(
                store, options, LiveOptions(poll=poll, poll_interval=0.2), stop, lambda _: None
            ).__dict__
        ),
    )
    thread.start()
    try:
        wait_for(lambda: ledger.exists() and count(ledger, "sessions") >= 3)
        yield status
    finally:
        stop.set()
        thread.join(timeout=WAIT)
        store.close()


def count(ledger: Path, table: str, where: str = "1") -> int:
    import sqlite3

    conn = sqlite3.connect(ledger)
    try:
        return conn.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def wait_for(condition: Callable[[], bool], seconds: float = WAIT) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def has_message(ledger: Path, text: str) -> bool:
    return count(ledger, "messages", f"content = '{text}'") > 0


@pytest.mark.parametrize("poll", [False, True], ids=["events", "polling"])
def test_appended_lines_arrive_and_a_half_line_waits(tmp_path, poll):
    home = make_home(tmp_path)
    ledger = tmp_path / "l.db"
    with watching(home, ledger, poll=poll):
        with main_file(home).open("ab") as f:
            f.write(line("live-1", "first live line"))
        wait_for(lambda: has_message(ledger, "first live line"))
        half = line("live-2", "written in two halves")
        with main_file(home).open("ab") as f:
            f.write(half[:30])
        time.sleep(1.0)
        assert not has_message(ledger, "written in two halves")
        with main_file(home).open("ab") as f:
            f.write(half[30:])
        wait_for(lambda: has_message(ledger, "written in two halves"))
        # Each flush is a run with its tail lag: the median and the largest, write → commit.
        flushed = "mode = 'live' AND imported + upserted > 0 AND finished_at IS NOT NULL"
        wait_for(lambda: count(ledger, "import_runs", flushed) >= 2)
        assert count(ledger, "import_runs", f"{flushed} AND tail_lag_p50_ms IS NULL") == 0
        assert count(ledger, "import_runs", f"{flushed} AND tail_lag_ms < tail_lag_p50_ms") == 0


def test_new_files_and_folders_are_picked_up_without_restart(tmp_path):
    home = make_home(tmp_path)
    ledger = tmp_path / "l.db"
    project = home / ".claude" / "projects" / "-tmp-demo"
    with watching(home, ledger):
        (project / "44444444-4444-4444-8444-444444444444.jsonl").write_bytes(
            line("n1", "a new session", parent=None)  # type: ignore[arg-type]
        )
        wait_for(lambda: has_message(ledger, "a new session"))
        sub = project / "44444444-4444-4444-8444-444444444444" / "subagents"
        sub.mkdir(parents=True)
        (sub / "agent-fresh01.jsonl").write_bytes(line("n2", "a new subagent", parent=None))  # type: ignore[arg-type]
        wait_for(lambda: has_message(ledger, "a new subagent"))
        other = home / ".claude" / "projects" / "-tmp-another-project"
        other.mkdir()
        (other / "55555555-5555-4555-8555-555555555555.jsonl").write_bytes(
            line("n3", "a new project", parent=None)  # type: ignore[arg-type]
        )
        wait_for(lambda: has_message(ledger, "a new project"))
    assert count(ledger, "sessions", "is_subagent AND source_session_id LIKE '%fresh01'") == 1


def test_an_atomic_replace_gives_no_duplicates(tmp_path):
    home = make_home(tmp_path)
    ledger = tmp_path / "l.db"
    path = main_file(home)
    with watching(home, ledger):
        before = count(ledger, "messages")
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(path.read_bytes() + line("replaced-1", "after the replace"))
        os.replace(tmp, path)
        wait_for(lambda: has_message(ledger, "after the replace"))
        assert count(ledger, "messages") == before + 1
    clean = SqliteStore(tmp_path / "clean.db")
    backfill(clean, home)
    assert snapshot(SqliteStore(ledger))["messages"] == snapshot(clean)["messages"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_stopped_mid_burst_then_restarted_equals_a_clean_backfill(tmp_path, sig):
    home = make_home(tmp_path)
    ledger = tmp_path / "l.db"
    command = [
        sys.executable,
        "-c",
        "from tracehouse.cli.app import main; main()",
        "sync",
        "live",
        "--home",
        str(home),
        "--store",
        str(ledger),
        "-q",
    ]
    private = tmp_path / "private-tmp"
    private.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(private)}
    process = subprocess.Popen(command, env=env)
    wait_for(lambda: count(ledger, "sessions") >= 3, 30)
    stop_writing = threading.Event()

    def burst() -> None:
        n = 0
        while not stop_writing.is_set() and n < 400:
            with main_file(home).open("ab") as f:
                f.write(line(f"b{n}", f"burst {n}", parent=f"b{n - 1}" if n else "u7"))
            n += 1
            time.sleep(0.005)

    writer = threading.Thread(target=burst)
    writer.start()
    time.sleep(0.8)
    process.send_signal(sig)
    code = process.wait(timeout=30)
    stop_writing.set()
    writer.join()
    assert code == (0 if sig == signal.SIGTERM else -signal.SIGKILL)
    # a killed watcher leaves its scratch directory behind; the next one removes it
    assert len(list(private.glob("tracehouse-scratch-*"))) == (sig == signal.SIGKILL)
    # restart: the catch-up brings the ledger to the final files, nothing twice
    restart = subprocess.Popen(command, env=env)
    final = count_lines = len(main_file(home).read_bytes().splitlines())
    assert final == count_lines
    clean = SqliteStore(tmp_path / "clean.db")
    backfill(clean, home)
    expected = snapshot(clean)
    store = SqliteStore(ledger)
    try:
        wait_for(lambda: snapshot(store)["messages"] == expected["messages"], 30)
    finally:
        restart.send_signal(signal.SIGTERM)
        assert restart.wait(timeout=30) == 0
    assert snapshot(store) == expected
    assert list(private.glob("tracehouse-scratch-*")) == []
    store.close()


def test_a_deleted_file_keeps_its_session_flagged_missing(tmp_path):
    home = make_home(tmp_path)
    ledger = tmp_path / "l.db"
    agent = home / ".claude" / "projects" / "-tmp-demo" / "agent-7e57ab1e.jsonl"
    with watching(home, ledger):
        agent.unlink()
        wait_for(lambda: count(ledger, "sessions", "source_missing_at IS NOT NULL") == 1)
    assert count(ledger, "sessions") == 3


@pytest.mark.parametrize("poll", [False, True], ids=["events", "polling"])
def test_a_write_during_the_catch_up_is_not_missed(tmp_path, monkeypatch, poll):
    """The catch-up reads while the agent writes: the watcher must already be listening."""
    import tracehouse.pipeline.live as live

    home = make_home(tmp_path)
    ledger = tmp_path / "l.db"
    real_sync = live.sync

    def catch_up_then_write(*args, **kwargs):  # type: ignore[no-untyped-def]
        report = real_sync(*args, **kwargs)
        if "targets" not in kwargs and not has_message(ledger, "during the catch-up"):
            with main_file(home).open("ab") as f:
                f.write(line("cu-1", "during the catch-up"))
        return report

    monkeypatch.setattr(live, "sync", catch_up_then_write)
    with watching(home, ledger, poll=poll):
        wait_for(lambda: has_message(ledger, "during the catch-up"))


def test_the_full_scan_catches_what_events_missed(tmp_path, monkeypatch):
    import tracehouse.pipeline.live as live

    class Deaf:  # an observer that reports nothing, as after an inotify queue overflow
        def stop(self) -> None: ...
        def join(self, timeout: float | None = None) -> None: ...

    monkeypatch.setattr(live, "start_observer", lambda *args: Deaf())
    home = make_home(tmp_path)
    ledger = tmp_path / "l.db"
    store = SqliteStore(ledger)
    stop = threading.Event()
    options = SyncOptions(sources={"claude-code": [home / ".claude"]})
    thread = threading.Thread(
        target=run_live,
        args=(store, options, LiveOptions(full_scan_interval=0.5), stop, lambda _: None),
    )
    thread.start()
    try:
        wait_for(lambda: count(ledger, "sessions") >= 3)
        with main_file(home).open("ab") as f:
            f.write(line("scan-1", "found by the full scan"))
        wait_for(lambda: has_message(ledger, "found by the full scan"))
    finally:
        stop.set()
        thread.join(timeout=WAIT)
        store.close()


def test_polling_is_used_with_one_line_when_native_events_fail(tmp_path, monkeypatch):
    import tracehouse.pipeline.live as live

    class Broken(live.Observer):  # type: ignore[misc,valid-type]
        def schedule(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(live, "Observer", Broken)
    logged: list[str] = []
    observer = live.start_observer(
        [tmp_path], live._Enqueue(__import__("queue").SimpleQueue()), LiveOptions(), logged.append
    )
    try:
        assert type(observer).__name__ == "PollingObserver"
        assert len(logged) == 1 and "polling" in logged[0] and "watch limit" in logged[0]
    finally:
        observer.stop()
        observer.join()


def test_only_the_scratch_of_runs_no_longer_running_is_removed(tmp_path):
    from tracehouse.state import scratch

    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    orphan = tmp_path / f"tracehouse-scratch-{ended.pid}-a1b2"
    old_orphan = tmp_path / f"tracehouse-live-{ended.pid}-e5f6"  # named by an earlier release
    running = tmp_path / f"tracehouse-scratch-{os.getpid()}-c3d4"
    unrelated = tmp_path / "tracehouse-live-notes"
    for folder in (orphan, old_orphan, running, unrelated):
        (folder / "kept").mkdir(parents=True)
    assert sorted(scratch.remove_leftovers(str(tmp_path))) == sorted([str(orphan), str(old_orphan)])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, unrelated.name])


def test_a_locked_store_loses_nothing(tmp_path):
    import sqlite3

    home = make_home(tmp_path)
    ledger = tmp_path / "l.db"
    with watching(home, ledger):
        blocker = sqlite3.connect(ledger, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another writer holds the ledger
        with main_file(home).open("ab") as f:
            f.write(line("locked-1", "written while the ledger was locked"))
        time.sleep(1.5)
        blocker.execute("COMMIT")
        blocker.close()
        wait_for(lambda: has_message(ledger, "written while the ledger was locked"))


def test_live_into_postgresql(tmp_path, pg_schemas):
    """The watcher a teammate runs: appended lines reach the shared ledger."""
    from tracehouse.store import open_store

    dsn, home = pg_schemas(), make_home(tmp_path)
    store, reader = open_store(dsn), open_store(dsn)
    stop = threading.Event()
    options = SyncOptions(sources={"claude-code": [home / ".claude"]})
    live = LiveOptions(poll_interval=0.2)
    thread = threading.Thread(target=lambda: run_live(store, options, live, stop, lambda _: None))
    thread.start()

    def messages(text: str) -> int:
        return len(reader.query("SELECT 1 FROM messages WHERE content = ?", [text]))

    try:
        wait_for(lambda: reader.info().row_counts["sessions"] >= 3)
        with main_file(home).open("ab") as f:
            f.write(line("live-pg", "to the team ledger"))
        wait_for(lambda: messages("to the team ledger") == 1)
    finally:
        stop.set()
        thread.join(timeout=WAIT)
        store.close()
        reader.close()


@pytest.mark.parametrize("poll", [False, True], ids=["events", "polling"])
def test_a_cursor_bubble_arrives_while_watching(tmp_path, poll, monkeypatch):
    """Cursor writes its database (here in WAL mode, as 2026 builds do): the watcher follows,
    from the copy it keeps, and removes that copy when it stops."""
    import json
    import sqlite3
    import tempfile

    import xxhash

    from tests.sources.cursor_dbs import bubble, make_user_dir, put

    private = tmp_path / "private-tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    user = make_user_dir(tmp_path / "home")
    ledger = tmp_path / "l.db"
    store = SqliteStore(ledger)
    stop = threading.Event()
    options = SyncOptions(sources={"cursor": [user]})
    live = LiveOptions(poll=poll, poll_interval=0.2)
    thread = threading.Thread(target=lambda: run_live(store, options, live, stop, lambda _: None))
    thread.start()
    try:
        wait_for(lambda: count(ledger, "sessions") >= 8)
        conn = sqlite3.connect(user / "globalStorage" / "state.vscdb", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        key = "composerData:c3-split"
        data = json.loads(
            conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()[0]
        )
        data["fullConversationHeadersOnly"].append({"bubbleId": "v5", "type": 1})
        conn.execute("BEGIN")
        put(conn, "cursorDiskKV", "bubbleId:c3-split:v5", bubble("v5", 1, "typed while watched"))
        put(conn, "cursorDiskKV", key, data)
        conn.execute("COMMIT")
        wait_for(lambda: has_message(ledger, "typed while watched"))
        kept = xxhash.xxh64_hexdigest(os.fsencode(user / "globalStorage" / "state.vscdb"))
        assert len(list(private.glob(f"tracehouse-scratch-*/{kept}/state.vscdb"))) == 1
        data["fullConversationHeadersOnly"].append({"bubbleId": "v6", "type": 2})
        conn.execute("BEGIN")  # the same WAL: read from the kept copy and the -wal alone
        put(conn, "cursorDiskKV", "bubbleId:c3-split:v6", bubble("v6", 2, "and answered"))
        put(conn, "cursorDiskKV", key, data)
        conn.execute("COMMIT")
        wait_for(lambda: has_message(ledger, "and answered"))
        conn.close()
    finally:
        stop.set()
        thread.join(timeout=WAIT)
        store.close()
    assert list(private.iterdir()) == []


def test_a_message_crush_writes_into_its_wal_arrives_while_watching(tmp_path):
    """Crush writes its database in WAL mode: a new message changes only the `-wal` (no
    checkpoint here), and the watcher reads it at once, not at its next full scan."""
    import json

    from tests.sources.test_crush import MAIN, make_database, part

    conn = make_database(tmp_path / "dotfiles")
    ledger = tmp_path / "l.db"
    store = SqliteStore(ledger)
    stop = threading.Event()
    options = SyncOptions(sources={"crush": [tmp_path]})
    live = LiveOptions(full_scan_interval=3600)
    thread = threading.Thread(target=lambda: run_live(store, options, live, stop, lambda _: None))
    thread.start()
    try:
        wait_for(lambda: count(ledger, "sessions") >= 2)
        database = tmp_path / "dotfiles" / ".crush" / "crush.db"
        stamp = database.stat().st_mtime_ns
        conn.execute("INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?)",
                     ("m5", MAIN, "user", json.dumps([part("text", text="typed while watched")]),
                      None, 1754605300, 1754605300, None, None))  # fmt: skip
        wait_for(lambda: has_message(ledger, "typed while watched"))
        assert database.stat().st_mtime_ns == stamp  # only the -wal was written
    finally:
        stop.set()
        thread.join(timeout=WAIT)
        store.close()
        conn.close()
