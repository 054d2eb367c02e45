"""`sync live --events` (issue #70: the attribution design's notice per incoming turn): a line
when a turn comes in and when it ends, with the session's label, how the prompt arrived (`rpc`
where the agent recorded nothing) and an 80-character preview; each once, and never for turns
a source re-sends that began before the watcher."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime

import orjson
import pytest

from tests.pipeline.helpers import main_file, make_home
from tests.pipeline.test_live import wait_for
from tracehouse.model.contract import ImportBatch, ImportItem, ImportResponse, ItemResult
from tracehouse.model.tables import TABLES_BY_NAME
from tracehouse.pipeline.live import LiveOptions, run_live
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.turn_events import TurnEvent, TurnEvents, printer
from tracehouse.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.slow


def _now() -> str:
    """Now, when the test runs (not when the suite collected it: a watcher tells only turns
    begun after it started, less a minute)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
LONG = "Please rename the retry helper everywhere and then run the whole test suite again " * 2


def _record(kind: str, uuid: str, parent: str, message: dict) -> bytes:
    line = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "cwd": "/tmp/p",
            "timestamp": _now(), "message": message}  # fmt: skip
    return orjson.dumps(line) + b"\n"


def test_a_turn_that_comes_in_while_watching_is_told_as_it_starts_and_ends(tmp_path) -> None:
    home = make_home(tmp_path)
    store = SqliteStore(tmp_path / "l.db")
    told: list[str] = []
    options = SyncOptions(sources={"claude-code": [home / ".claude"]})
    options = replace(options, on_commit=printer(told.append))
    stop = threading.Event()
    thread = threading.Thread(target=lambda: run_live(store, options, LiveOptions(), stop, print))
    thread.start()
    try:
        wait_for(lambda: (tmp_path / "l.db").exists())
        with main_file(home).open("ab") as f:
            f.write(_record("user", "ev-1", "u7", {"role": "user", "content": LONG}))
        wait_for(lambda: any(" started " in line for line in told))
        answer = {
            "id": "msg_ev", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "Renamed it in 4 files; 212 passed."}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 9, "output_tokens": 5},
        }  # fmt: skip
        with main_file(home).open("ab") as f:
            f.write(_record("assistant", "ev-2", "ev-1", answer))
        wait_for(lambda: any(" ended" in line for line in told))
    finally:
        stop.set()
        thread.join(timeout=10)
        store.close()
    started = [line for line in told if " started " in line]
    ended = [line for line in told if " ended" in line]
    assert len(started) == 1 and len(ended) == 1, told
    assert started[0].startswith("cc-") and " · rpc · Please rename the retry helper" in started[0]
    assert started[0].endswith("…") and len(started[0].split(" · ")[-1]) == 80
    assert ended[0].endswith("Renamed it in 4 files; 212 passed.")


def _rows(table: str, **values: object) -> tuple[object, ...]:
    return tuple(values.get(name) for name in TABLES_BY_NAME[table].names)


def _batch(started_at: str, completed_at: str | None) -> tuple[ImportBatch, ImportResponse]:
    """A session, its prompt (arrived through `codex exec`) and its turn, as a sync hands them
    to the store, and the store's answer."""
    item = ImportItem("codex", "sx", "f", 0, {"session_id": "S"})
    rows = {
        "messages": [_rows("messages", message_id="M", session_id="S", content="fix the build",
                           meta='{"source": "exec"}')],
        "turns": [_rows("turns", turn_id="T", session_id="S", seq=1, started_at=started_at,
                        completed_at=completed_at, query_message_ids='["M"]',
                        response_message_id="A" if completed_at else None,
                        status="completed" if completed_at else None)],
    }  # fmt: skip
    batch = ImportBatch(items=(item,), rows=rows)
    return batch, ImportResponse("run", (ItemResult("codex", "sx", "cx-sx", "imported"),))


def test_old_turns_are_not_told_and_each_event_once() -> None:
    batch, response = _batch("2020-01-01T00:00:00.000Z", "2020-01-01T00:01:00.000Z")
    assert TurnEvents().of(batch, response) == []
    now = _now()
    batch, response = _batch(now, None)
    events = TurnEvents()
    first = events.of(batch, response)
    assert [e.kind for e in first] == ["started"] and first[0].source == "exec"
    assert events.of(batch, response) == []  # sent again: told already
    done, response = _batch(now, now)
    assert [e.kind for e in events.of(done, response)] == ["ended"]


def test_an_event_line_shows_no_terminal_codes() -> None:
    event = TurnEvent("started", "cc-1", 1, "rpc", "\x1b]0;owned\x07 clear\x1b[2J")
    assert "\x1b" not in event.line() and "\x07" not in event.line()


def test_a_failed_item_has_no_label_and_no_event() -> None:
    batch, response = _batch(_now(), None)
    failed = ImportResponse(
        run_id=response.run_id,
        results=tuple(replace(r, status="failed") for r in response.results),
    )
    assert isinstance(failed.results[0], ItemResult)
    assert TurnEvents().of(batch, failed) == []
