"""Lines one transcript copies from another are counted once (FORMATS §1.6, §1.8): a resumed
session replaying an earlier one (by uuid), a side-question sidechain replaying its parent's
messages with new request ids (by message.id)."""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import DATA
from tests.pipeline.helpers import backfill, snapshot
from tests.sources.suite import parse_all
from tracehouse.model import ids
from tracehouse.parsers import claude_code
from tracehouse.store.sqlite.store import SqliteStore

HOME = DATA / "claude" / "resume-home"
A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"


def units():
    return {u.key.rsplit("/", 1)[-1]: u for u in claude_code.discover([HOME / ".claude"])}


def test_the_resumed_session_keeps_only_its_own_lines():
    item, frames, _ = parse_all(claude_code, units()[f"{B}.jsonl"])
    messages = sorted(frames["messages"].to_dicts(), key=lambda m: m["seq"])
    assert [m["content"] for m in messages] == ["back again", "welcome back"]
    # the new prompt hangs off the original session's last message
    assert messages[0]["parent_message_id"] == ids.message_id("claude-code", A, "msg:msg_A2")
    assert item.session["total_tokens"] == 12 + 22 + 300
    assert item.session["message_count"] == 2


def test_the_original_session_is_untouched():
    item, frames, _ = parse_all(claude_code, units()[f"{A}.jsonl"])
    assert frames["messages"].height == 4
    assert item.session["total_tokens"] == (10 + 20 + 100) + (11 + 21 + 200)


def test_a_side_question_does_not_count_its_parents_message_again():
    item, frames, _ = parse_all(claude_code, units()["agent-abtw0001.jsonl"])
    contents = [m["content"] for m in sorted(frames["messages"].to_dicts(), key=lambda m: m["seq"])]
    assert contents == ["btw, what did you say first?", "You said: first answer."]
    assert item.session["total_tokens"] == 12 + 22 + 300


def test_totals_over_the_home_count_every_response_once(tmp_path):
    store = SqliteStore(tmp_path / "l.db")
    backfill(store, HOME)
    total = sum(s["total_tokens"] for s in store.rows("sessions"))
    responses = {"msg_A1": 130, "msg_A2": 232, "msg_B1": 334, "msg_S1": 334}
    assert total == sum(responses.values())
    store.close()


def test_the_ledger_does_not_depend_on_import_order(tmp_path):
    """The resumed session and the side question imported before the session they copy."""
    from tracehouse.pipeline.ingest import run_tasks
    from tracehouse.pipeline.options import SyncOptions, SyncReport

    in_order = SqliteStore(tmp_path / "a.db")
    backfill(in_order, HOME)
    reversed_order = SqliteStore(tmp_path / "b.db")
    options = SyncOptions(sources={}, batch_sessions=1)
    tasks = [(u, None, 0) for u in reversed(claude_code.discover([HOME / ".claude"]))]
    assert tasks[0][0].key.endswith(f"{B}.jsonl")
    run_tasks(reversed_order, options, tasks, SyncReport(run_id="r"), lambda n: None)
    a, b = snapshot(in_order), snapshot(reversed_order)
    for table in ("sessions", "turns", "messages", "tool_calls"):
        assert a[table] == b[table], table


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(budget=st.integers(min_value=1, max_value=2000))
def test_replays_are_skipped_the_same_way_in_chunks(budget):
    unit = units()[f"{B}.jsonl"]
    whole = parse_all(claude_code, unit)
    chunked = parse_all(claude_code, unit, budget)
    assert chunked[1]["messages"].rows() == whole[1]["messages"].rows()
    assert chunked[0].session == whole[0].session


def test_replayed_lines_are_accounted_for():
    result = claude_code.parse(
        units()[f"{B}.jsonl"],
        None,
        __import__("tracehouse.parsers.base", fromlist=["ParseOptions"]).ParseOptions(now=1e10),
    )
    assert result.accounting == {"replayed": 4, "row": 2}
    assert orjson.loads(orjson.dumps(result.cursor))["offset"] > 0


def test_a_resumed_file_seen_before_its_first_line_is_still_recognised(tmp_path):
    """The watcher can parse a new file while it is empty; its replays must still be found."""
    import shutil

    from tracehouse.parsers.base import ParseOptions

    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    project = home / ".claude" / "projects" / "-tmp-resume"
    resumed = project / f"{B}.jsonl"
    content = resumed.read_bytes()
    resumed.write_bytes(b"")
    (unit,) = [u for u in claude_code.discover([home / ".claude"]) if u.key == str(resumed)]
    options = ParseOptions(now=1e10)
    first = claude_code.parse(unit, None, options)
    assert first.item is None
    resumed.write_bytes(content)
    second = claude_code.parse(unit, first.cursor, options)
    assert second.accounting == {"replayed": 4, "row": 2}
