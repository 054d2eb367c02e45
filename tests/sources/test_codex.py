"""Codex parser: the source suite on tests/data fixtures of every generation, then its rules."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import DATA
from tests.sources.suite import SourceSuite, parse_all
from tracehouse.model import ids
from tracehouse.parsers import codex
from tracehouse.parsers.base import Unit
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore

HOME = DATA / "codex" / "home" / ".codex"
G0 = "00000000-0000-4000-8000-000000000000"
G1 = "11111111-1111-4111-8111-111111111111"
PARENT = "019c0000-0000-7000-8000-000000000002"
REVIEW = "019c0000-0000-7000-8000-000000000003"
CHILD = "019c0000-0000-7000-8000-000000000004"
GONE = "019c0000-0000-7000-8000-0000000000ff"


@pytest.fixture
def parser():
    return codex


@pytest.fixture
def units():
    return [u for u in codex.discover([HOME]) if u.info["kind"] != "history"]


@pytest.fixture
def bad_unit(tmp_path):
    good = _rollout(PARENT).read_bytes().splitlines(keepends=True)
    body = [
        *good[:4],
        b"{not json at all\n",
        b"[1, 2, 3]\n",
        b'{"timestamp":"2026-02-23T12:00:02.000Z","type":"totally-new-record","payload":{}}\n',
        *good[4:],
    ]
    folder = tmp_path / "sessions" / "2026" / "02" / "23"
    folder.mkdir(parents=True)
    (folder / _rollout(PARENT).name).write_bytes(b"".join(body))
    (unit,) = codex.discover([tmp_path])
    return unit


class TestCodexContract(SourceSuite):
    pass


def _rollout(thread: str) -> Path:
    return next(p for p in HOME.rglob(f"rollout-*{thread}.json*"))


def _unit(thread: str) -> Unit:
    return next(u for u in codex.discover([HOME]) if u.info.get("thread") == thread)


def parsed(thread: str) -> tuple[Any, dict[str, list[dict[str, Any]]]]:
    item, frames, rejects = parse_all(codex, _unit(thread))
    assert rejects == []
    rows = {}
    for name, frame in frames.items():
        found = frame.sort("seq") if "seq" in frame.columns else frame
        rows[name] = [_decoded(row) for row in found.to_dicts()]
    return item, rows


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    for key in ("meta", "metadata", "query_message_ids"):
        if isinstance(row.get(key), str):
            row[key] = orjson.loads(row[key])
    return row


def test_discovery_finds_every_generation_and_the_history():
    kinds = {(u.info["kind"], u.info.get("thread")) for u in codex.discover([HOME])}
    assert ("legacy", G0) in kinds and ("rollout", G1) in kinds and ("rollout", CHILD) in kinds
    assert ("history", None) in kinds


def test_codex_home_comes_from_the_environment(tmp_path):
    assert codex.default_roots(tmp_path, {}) == [tmp_path / ".codex"]
    assert codex.default_roots(tmp_path, {"CODEX_HOME": "/x/codex"}) == [Path("/x/codex")]


def test_generations_are_recorded():
    for thread, generation in ((G0, "G0"), (G1, "G1"), (PARENT, "G2"), (CHILD, "G3")):
        item, _ = parsed(thread)
        assert item.session["metadata"]["generation"] == generation


def test_typed_prompts_are_user_and_injected_context_is_system():
    _, rows = parsed(PARENT)
    by_type = {(m["role"], m["message_type"], (m["content"] or "")[:12]) for m in rows["messages"]}
    assert ("system", "system", "<permissions") in by_type  # developer instructions
    assert ("system", "system", "# AGENTS.md ") in by_type
    prompts = [m for m in rows["messages"] if m["message_type"] == "user"]
    typed = [m for m in prompts if m["meta"]["source"] == "typed"]
    assert [m["content"] for m in typed] == ["run the tests", "look it up and patch it"]
    assert [m["meta"]["source"] for m in prompts] == ["typed", "typed", "review"]
    assert typed[0]["meta"] == {"source": "typed", "origin": "cli", "history_ts": 1771848002.0}
    _, g1 = parsed(G1)
    kinds = [m["message_type"] for m in g1["messages"]]
    assert kinds == ["system", "user", "assistant"]  # environment_context, prompt, answer


def test_reasoning_goes_into_the_following_assistant_message():
    _, rows = parsed(PARENT)
    answer = next(m for m in rows["messages"] if m["content"] == "One test fails.")
    assert answer["thinking"] == "**Running tests**"
    assert answer["model"] == "gpt-5.2-codex"
    assert sum(m["content"] == "One test fails." for m in rows["messages"]) == 1  # echo ignored


def test_tool_calls_are_joined_with_outputs_exit_codes_and_turn_outcomes():
    _, rows = parsed(PARENT)
    calls = {c["source_tool_call_id"]: c for c in rows["tool_calls"]}
    assert calls["call_t1"]["status"] == "failed" and calls["call_t1"]["error"] == "exit code 1"
    assert orjson.loads(calls["call_t1"]["params"]) == {"cmd": "pytest"}
    assert (
        calls["call_p1"]["status"] == "completed" and calls["call_p1"]["tool_name"] == "apply_patch"
    )
    assert calls["call_t2"]["status"] == "failed"  # no output: its turn was aborted
    assert "aborted" in calls["call_t2"]["error"]
    searches = [c for c in rows["tool_calls"] if c["tool_name"] == "web_search"]
    assert len(searches) == 2 and all(c["status"] == "completed" for c in searches)
    uris = {s["uri"] for s in rows["message_sources"]}
    assert uris == {"search:pytest fixture scope", "https://docs.pytest.org/en/stable/fixture.html"}


def test_turns_follow_task_events_with_their_status_and_model():
    _, rows = parsed(PARENT)
    turns = rows["turns"]
    assert [t["status"] for t in turns] == ["completed", "aborted", "completed"]
    assert [t["model"] for t in turns[:2]] == ["gpt-5.2-codex", "gpt-5.3-codex"]
    assert turns[0]["source_turn_id"] == "019c0000-aaaa-7000-8000-000000000001"
    assert turns[0]["metadata"]["duration_ms"] == 6000


def test_token_counts_skip_re_emitted_snapshots_resets_and_mirrored_reviews():
    item, rows = parsed(PARENT)
    s = item.session
    # 1000 + (duplicate skipped) + 1200, then the total resets and its last usage (500) counts;
    # the review child's usage mirrored here during the review is not counted.
    assert (s["input_tokens"], s["cached_input_tokens"]) == (2700, 1800)
    assert (s["output_tokens"], s["reasoning_tokens"]) == (170, 60)
    assert s["total_tokens"] == 2870
    assert sum(t["total_tokens"] or 0 for t in rows["turns"]) == s["total_tokens"]
    assert s["metadata"]["mirrored_token_events"] == 1


def test_a_spawned_child_does_not_count_its_parents_replayed_history():
    item, rows = parsed(CHILD)
    s = item.session
    assert (s["input_tokens"], s["output_tokens"]) == (400, 50)
    assert s["metadata"]["replayed_records"] == 1
    assert s["parent_session_id"] == ids.session_id("codex", "019c0000-0000-7000-8000-0000000000aa")
    assert s["is_subagent"] and s["task_description"] == "explorer"
    prompt = next(m for m in rows["messages"] if m["content"] == "explore the repo")
    assert prompt["meta"]["source"] == "agent"
    assert s["workspace_path"] == "/tmp/repo"  # the first session_meta is the thread's own


def test_the_review_child_is_linked_to_its_parents_review_call():
    item, rows = parsed(REVIEW)
    _, parent = parsed(PARENT)
    review = next(c for c in parent["tool_calls"] if c["tool_name"] == "review")
    assert item.session["parent_session_id"] == ids.session_id("codex", PARENT)
    assert item.session["spawn_tool_call_id"] == review["tool_call_id"]
    assert review["result"].startswith("One finding.")
    assert rows["messages"][0]["meta"]["source"] == "review"


def test_session_metadata_title_and_compaction():
    item, rows = parsed(PARENT)
    s = item.session
    assert s["title"] == "tests fixed"  # session_index.jsonl: the last entry wins
    assert (s["git_branch"], s["git_commit"]) == ("feature", "def456")
    assert s["git_remote"] == "git@example.com:me/app.git"
    assert (s["tool_version"], s["entrypoint"]) == ("0.118.0", "codex-tui")
    assert s["model"] == "gpt-5.3-codex" and s["metadata"]["origin"] == "cli"
    hosts = [m for m in rows["messages"] if m["message_type"] == "host"]
    assert hosts and hosts[0]["metadata"]["compacted"]["replacement_history_items"] == 1
    assert "a_brand_new_event" in str(s["metadata"]["unknown_records"])


def test_legacy_json_rollout_becomes_a_session_with_its_tool_call():
    _, rows = parsed(G0)
    assert [m["message_type"] for m in rows["messages"]] == ["user", "assistant"]
    assert rows["messages"][1]["thinking"] == "I should run ls"
    (call,) = rows["tool_calls"]
    assert call["tool_name"] == "shell" and call["status"] == "completed"


def _sync(store: SqliteStore, home: Path):
    return sync(store, SyncOptions(sources={"codex": [home]}, workers=0))


def test_history_recovers_a_deleted_rollout_but_never_replaces_an_imported_one(tmp_path):
    store = SqliteStore(tmp_path / "l.db")
    _sync(store, HOME)
    (gone,) = store.query("SELECT * FROM sessions WHERE source_session_id = ?", [GONE])
    assert '"recovered_from":"history"' in gone["metadata"] and gone["message_count"] == 2
    # The parent's rollout is deleted: a full run sees its prompts only in the history.
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    _rollout_in(home, PARENT).unlink()
    _sync(store, HOME)
    report = sync(store, SyncOptions(sources={"codex": [home]}, workers=0, full=True))
    assert report.statuses["skipped"] >= 1
    (parent,) = store.query("SELECT * FROM sessions WHERE source_session_id = ?", [PARENT])
    assert parent["message_count"] == 7 and "recovered_from" not in parent["metadata"]


def _rollout_in(home: Path, thread: str) -> Path:
    return next(p for p in home.rglob(f"rollout-*{thread}.jsonl"))


RESUMED = b"".join(
    line.encode() + b"\n"
    for line in (
        '{"timestamp":"2026-02-24T09:00:00.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t-resumed"}}',
        '{"timestamp":"2026-02-24T09:00:00.100Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"and now?"}]}}',  # noqa: E501
        '{"timestamp":"2026-02-24T09:00:00.100Z","type":"event_msg","payload":{"type":"user_message","message":"and now?"}}',  # noqa: E501
        '{"timestamp":"2026-02-24T09:00:02.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"output_tokens":10,"total_tokens":110},"last_token_usage":{"input_tokens":100,"output_tokens":10,"total_tokens":110}}}}',
        '{"timestamp":"2026-02-24T09:00:03.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"All green."}]}}',  # noqa: E501
        '{"timestamp":"2026-02-24T09:00:04.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t-resumed"}}',
    )
)


def test_a_resumed_turn_appended_to_a_rollout_imports_only_the_new_rows(tmp_path):
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    store = SqliteStore(tmp_path / "l.db")
    _sync(store, home)
    before = store.query("SELECT total_tokens FROM sessions WHERE source_session_id = ?", [PARENT])
    with _rollout_in(home, PARENT).open("ab") as f:
        f.write(RESUMED)
    report = _sync(store, home)
    assert report.rows_written == 4  # the session row, the new turn, the prompt and the answer
    (after,) = store.query(
        "SELECT total_tokens, turn_count FROM sessions WHERE source_session_id = ?", [PARENT]
    )
    assert after["total_tokens"] == before[0]["total_tokens"] + 110 and after["turn_count"] == 4
    fresh = SqliteStore(tmp_path / "fresh.db")
    _sync(fresh, home)
    for table in ("sessions", "turns", "messages", "tool_calls", "message_sources"):
        got = store.query(f"SELECT fingerprint FROM {table} ORDER BY 1")
        assert got == fresh.query(f"SELECT fingerprint FROM {table} ORDER BY 1"), table


def test_a_watermark_from_before_the_kit_port_is_read_whole_once(tmp_path):
    """Turns and sums are the kit's since issue #65: a watermark that kept the builder's own
    state (shape 0) is not resumed; the rollout is read whole when it grows, to a first
    read's rows."""
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    store = SqliteStore(tmp_path / "l.db")
    _sync(store, home)
    rollout = _rollout_in(home, PARENT)
    store.conn.execute(
        "UPDATE watermarks SET state = ? WHERE unit_key = ?",
        ('{"v": 1, "seq": 7, "call_seq": 2, "turn_seq": 3}', str(rollout)),
    )
    with rollout.open("ab") as f:
        f.write(RESUMED)
    report = _sync(store, home)
    assert report.bytes_read == rollout.stat().st_size
    fresh = SqliteStore(tmp_path / "fresh.db")
    _sync(fresh, home)
    for table in ("sessions", "turns", "messages", "tool_calls", "message_sources"):
        got = store.query(f"SELECT fingerprint FROM {table} ORDER BY 1")
        assert got == fresh.query(f"SELECT fingerprint FROM {table} ORDER BY 1"), table


def test_moving_a_rollout_to_archived_sessions_changes_nothing(tmp_path):
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    store = SqliteStore(tmp_path / "l.db")
    _sync(store, home)
    tables = ("sessions", "turns", "messages", "tool_calls", "message_sources")
    before = {t: store.query(f"SELECT fingerprint FROM {t} ORDER BY 1") for t in tables}
    source = _rollout_in(home, PARENT)
    (home / "archived_sessions").mkdir()
    source.rename(home / "archived_sessions" / source.name)
    report = _sync(store, home)
    assert report.rows_written == 0
    assert {t: store.query(f"SELECT fingerprint FROM {t} ORDER BY 1") for t in tables} == before
    assert store.query(
        "SELECT count(*) AS n FROM sessions WHERE source_missing_at IS NOT NULL"
    ) == [{"n": 0}]


def test_titles_come_from_the_thread_index_when_the_session_index_has_none(tmp_path):
    import sqlite3

    home = tmp_path / ".codex"
    shutil.copytree(HOME, home)
    db = sqlite3.connect(home / "state_5.sqlite")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, title TEXT NOT NULL)")
    db.executemany(
        "INSERT INTO threads VALUES (?, ?)",
        [(CHILD, "explore the repo for billing"), (PARENT, "run the tests"), (G1, "")],
    )
    db.commit()  # left open: the rows are in the -wal, read from a private copy
    titles = {}
    for unit in codex.discover([home]):
        if unit.info["kind"] == "rollout":
            item, _frames, _ = parse_all(codex, unit)
            titles[unit.info["thread"]] = item.session["title"]
    db.close()
    assert titles[CHILD] == "explore the repo for billing"
    assert titles[PARENT] == "tests fixed"  # session_index.jsonl names it: the user's name wins
    assert titles[G1] == "what is in this repo?"  # no name anywhere: its first prompt


def _review_home(tmp_path: Path, children: int) -> Path:
    """The fixture home with `children` review children of PARENT's review, each its own file."""
    home = tmp_path / ".codex"
    shutil.copytree(HOME, home)
    review = next(home.rglob(f"rollout-*{REVIEW}.jsonl"))
    for n in range(children - 1):
        thread = f"019c0000-0000-7000-8000-0000000001{n:02d}"
        copy = review.with_name(review.name.replace(REVIEW, thread))
        copy.write_text(review.read_text().replace(REVIEW, thread))
    return home


def test_each_rollout_is_read_once_for_every_review_child(tmp_path, monkeypatch):
    from tracehouse.parsers.codex import context
    from tracehouse.parsers.kit import jsonl

    home = _review_home(tmp_path, children=4)
    opened: list[str] = []

    def counting_open(path, *args, **kwargs):
        opened.append(str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(jsonl, "open", counting_open, raising=False)  # where blocks() opens
    context._reviews_of.cache_clear()
    linked = []
    for unit in codex.discover([home]):
        if unit.info["kind"] == "history":
            continue
        item, _frames, _rejects = parse_all(codex, unit)
        if item is not None and item.session.get("spawn_source_tool_call_id", "").startswith(
            "review:"
        ):
            linked.append(item.source_session_id)
    assert len(linked) == 4
    rollouts = [p for p in opened if os.path.basename(p).startswith("rollout-")]
    assert rollouts and len(rollouts) == len(set(rollouts))  # each at most once


def test_a_review_record_written_after_its_child_is_found_on_the_next_parse(tmp_path):
    home = _review_home(tmp_path, children=1)
    parent = next(home.rglob(f"rollout-*{PARENT}.jsonl"))
    lines = parent.read_text().splitlines(keepends=True)
    entered = next(i for i, line in enumerate(lines) if "entered_review_mode" in line)
    parent.write_text("".join(lines[:entered]))  # the child exists; the record does not yet

    def child_session() -> dict[str, Any]:
        unit = next(u for u in codex.discover([home]) if u.info.get("thread") == REVIEW)
        item, _frames, _rejects = parse_all(codex, unit)
        return item.session

    assert child_session()["parent_session_id"] is None
    parent.write_text("".join(lines))
    assert child_session()["parent_session_id"] == ids.session_id("codex", PARENT)


def test_a_review_child_created_inside_the_review_window_is_linked(tmp_path):
    """Real logs: a `/review` child's `session_meta` is stamped 8 ms after the parent's
    `entered_review_mode`; it is the child of the review whose window holds its creation."""
    from tracehouse.parsers.codex import context

    home = _review_home(tmp_path, children=1)
    child = next(home.rglob(f"rollout-*{REVIEW}.jsonl"))
    child.write_text(child.read_text().replace("2026-02-23T12:20:00.000Z",
                                               "2026-02-23T12:20:00.008Z"))  # fmt: skip
    context._reviews_of.cache_clear()
    unit = next(u for u in codex.discover([home]) if u.info.get("thread") == REVIEW)
    item, _frames, rejects = parse_all(codex, unit)
    assert rejects == []
    assert item.session["parent_source_session_id"] == PARENT
    assert item.session["spawn_source_tool_call_id"].startswith("review:")
    # outside the window (after `exited_review_mode`) it is no review's child
    child.write_text(child.read_text().replace("2026-02-23T12:20:00.008Z",
                                               "2026-02-23T12:21:00.000Z"))  # fmt: skip
    context._reviews_of.cache_clear()
    item, _frames, _ = parse_all(codex, unit)
    assert item.session["parent_source_session_id"] is None


def test_the_review_request_is_the_parents_message_that_spawns_the_review(tmp_path):
    """Codex writes the `/review` request only as `user_message` events (twice, in real logs)
    inside the review window: the parent keeps it once, as the review turn's prompt, and it is
    the message of the `review` call, so the child's `parent_message_id` names it."""
    _, rows = parsed(PARENT)
    review = next(c for c in rows["tool_calls"] if c["tool_name"] == "review")
    asked = [m for m in rows["messages"] if m["content"].startswith("Review the code changes")]
    assert len(asked) == 1
    (request,) = asked
    assert (request["message_type"], request["meta"]["source"]) == ("user", "review")
    assert review["message_id"] == request["message_id"]
    assert request["turn_id"] == review["turn_id"]

    store = SqliteStore(tmp_path / "l.db")
    _sync(store, HOME)
    (child,) = store.query("SELECT * FROM sessions WHERE source_session_id = ?", [REVIEW])
    assert child["parent_message_id"] == request["message_id"]
    assert child["parent_source_message_id"] == request["source_message_id"]
