"""`tracehouse import` cannot write where it has no right (issue #13, item 4): an item writes
only rows derived from its own source ids, never a cursor, and every refusal is one `failed`
result with a reason while the rest of the request goes on."""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson
import pytest

from tests.store.factory import batch, item, request
from tracehouse.model import ids
from tracehouse.model.codec import decode_request
from tracehouse.model.row_codec import MAX_FIELD


def victim_and(store: Any, hostile: dict[str, Any]) -> Any:
    store.import_batch(batch([item("victim")]))
    return store.import_batch(batch([hostile, item("bystander")]))


def message_sessions(store: Any) -> dict[str, str]:
    return {r["message_id"]: r["session_id"] for r in store.rows("messages")}


def test_another_sessions_message_id_is_refused_and_nothing_moves(make_store):
    store = make_store()
    hostile = item("thief")  # a ledger id is no field of the form: links are source ids
    hostile["messages"][0]["messageId"] = ids.message_id("claude-code", "victim", "m0")
    response = victim_and(store, hostile)
    assert [(r.source_session_id, r.status) for r in response.results] == [
        ("thief", "failed"),
        ("bystander", "imported"),
    ]
    assert "messages[0].messageId: unknown field" in response.results[0].reason
    victim = ids.session_id("claude-code", "victim")
    assert message_sessions(store)[ids.message_id("claude-code", "victim", "m0")] == victim


def test_a_call_naming_another_sessions_child_does_not_re_parent_it(make_store):
    store = make_store()
    parent = item("parent")
    child = item("child", parentSourceSessionId="parent")
    parent["toolCalls"][0]["spawnedSourceSessionId"] = "child"
    store.import_batch(batch([parent, child]))
    hostile = item("aaa-hijacker")  # its call id sorts before the parent's
    hostile["toolCalls"][0]["spawnedSourceSessionId"] = "child"
    store.import_batch(batch([hostile]))
    (row,) = store.query(
        "SELECT parent_session_id FROM sessions WHERE session_id = ?",
        (ids.session_id("claude-code", "child"),),
    )
    assert row["parent_session_id"] == ids.session_id("claude-code", "parent")


def test_a_source_attached_to_a_message_the_item_lacks_is_refused(make_store):
    store = make_store()
    raw = request([item("victim"), item("thief")])
    raw["items"][0]["sources"][0]["sourceMessageId"] = "m-of-another-session"
    response = store.import_batch(decode_request(orjson.dumps(raw)))
    assert [r.status for r in response.results] == ["failed", "imported"]
    assert "sources[0].sourceMessageId: not a message of this item" in response.results[0].reason


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            lambda i: i.update(watermarks=[{"sourceProvider": "codex", "unitKey": "/x"}]),
            "watermarks",
        ),
        (lambda i: i.update(sourceProvider="gemini"), "unknown provider 'gemini'"),
        (lambda i: i.update(session=[]), "session: expected an object"),
        (lambda i: i["turns"][0].update(inputTokens=-5), "out of range"),
        (lambda i: i["turns"][0].update(inputTokens=2**63), "out of range"),
        (lambda i: i["turns"][0].update(outputTokens=10**30), "expected an integer"),
        (lambda i: i["toolCalls"][0].update(paramsJson=_deep(300)), "cannot be stored as JSON"),
        (lambda i: i["messages"][0].update(messageId="msg_other"), "messageId: unknown field"),
        (lambda i: i["messages"][0].pop("sourceMessageId"), "sourceMessageId: missing"),
    ],
    ids=[
        "watermarks",
        "provider",
        "session-list",
        "negative",
        "int64",
        "float",
        "deep",
        "id",
        "no-source-id",
    ],
)
def test_each_refusal_is_one_failed_result_and_the_rest_imports(make_store, change, reason):
    store = make_store()
    hostile = item("hostile")
    change(hostile)
    # The stdlib writes what orjson will not (2^100, 300 levels), as a hostile producer would.
    body = json.dumps(request([hostile, item("fine")]))
    response = store.import_batch(decode_request(body))
    statuses = {r.source_session_id: r.status for r in response.results}
    assert statuses == {"hostile": "failed", "fine": "imported"}
    failed = next(r for r in response.results if r.status == "failed")
    assert reason in failed.reason
    assert not list(store.rows("watermarks"))


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def test_the_field_cap_applies_to_imports(make_store):
    store = make_store()
    big = item("big")
    big["messages"][0]["content"] = "x" * (MAX_FIELD + 10)
    response = store.import_batch(batch([big]))
    assert response.ok
    content = copy.deepcopy(store.query("SELECT content FROM messages WHERE seq = 0")[0]["content"])
    assert content.startswith("x" * 100) and "[cut:" in content and len(content) < MAX_FIELD + 200


def test_a_value_nested_too_deep_in_the_resume_state_is_a_reject_not_a_crash(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The parser holds the last assistant message open in its resume state (more of its lines
    may follow); a value nested past the JSON writer's depth in it was found only when the store
    wrote the state, and the sync stopped with a traceback. Now the line is a reject and the
    rest is imported."""
    from tests.pipeline.helpers import backfill
    from tracehouse.store.sqlite.store import SqliteStore

    # A subagent's warm-up: one assistant line, its message left open for lines to come.
    line = {"sessionId": "deep-1", "cwd": "/tmp/deep", "version": "2.1.114", "isSidechain": True,
            "agentId": "d33p0001", "type": "assistant", "uuid": "w1", "parentUuid": None,
            "timestamp": "2026-02-01T10:00:00.000Z", "requestId": "req_w",
            "message": {"id": "msg_w", "role": "assistant", "model": "claude-haiku-4-5",
                        "content": [{"type": "text", "text": "Warmed up."}],
                        "stop_reason": _deep(300)}}  # fmt: skip
    project = tmp_path / "home" / ".claude" / "projects" / "-tmp-deep"
    project.mkdir(parents=True)
    (project / "agent-d33p0001.jsonl").write_text(json.dumps(line) + "\n")
    sound = {**line, "isSidechain": False, "sessionId": "deep-2",
             "message": {**line["message"], "stop_reason": "end_turn"}}  # fmt: skip
    (project / "deep-2.jsonl").write_text(json.dumps(sound) + "\n")
    store = SqliteStore(tmp_path / "ledger.db")
    report = backfill(store, tmp_path / "home")
    assert [r.location.split(" ")[:2] for r in report.rejects] == [["line", "1"]]
    assert "nested deeper" in report.rejects[0].reason
    assert [s["source_session_id"] for s in store.rows("sessions")] == ["deep-2"]
    store.close()


def test_a_number_where_text_belongs_is_kept_as_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The second line of a two-line assistant message with a `model` of 2^64-1: the number
    went into a text column as a value no store can hold, and the sync stopped with an
    OverflowError. Text columns take a record's value as its text."""
    from tests.pipeline.helpers import backfill
    from tracehouse.store.sqlite.store import SqliteStore

    base = {"sessionId": "num-1", "cwd": "/tmp/num", "version": "2.1.30", "isSidechain": False}
    said = {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None,
         "timestamp": "2026-02-01T10:00:00.000Z", "message": {"role": "user", "content": "go"}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "requestId": "r1",
         "timestamp": "2026-02-01T10:00:01.000Z",
         "message": {**said, "content": [{"type": "text", "text": "Reading it."}]}},
        {**base, "type": "assistant", "uuid": "a2", "parentUuid": "a1", "requestId": "r1",
         "timestamp": "2026-02-01T10:00:01.500Z",
         "message": {**said, "model": 2**64 - 1, "content": [
             {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "x"}}]}},
        {**base, "type": "user", "uuid": "u2", "parentUuid": "a2",
         "timestamp": "2026-02-01T10:00:02.000Z", "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = 1"}]}},
        # a later answer in the same turn names its model as text again
        {**base, "type": "assistant", "uuid": "a3", "parentUuid": "u2", "requestId": "r2",
         "timestamp": "2026-02-01T10:00:03.000Z",
         "message": {**said, "id": "m2", "content": [{"type": "text", "text": "x is 1"}]}},
    ]  # fmt: skip
    project = tmp_path / "home" / ".claude" / "projects" / "-tmp-num"
    project.mkdir(parents=True)
    (project / "num-1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = SqliteStore(tmp_path / "ledger.db")
    report = backfill(store, tmp_path / "home")
    assert report.ok
    models = {m["model"] for m in store.rows("messages") if m["role"] == "assistant"}
    assert models == {str(2**64 - 1), "claude-sonnet-4-5"}
    store.close()
