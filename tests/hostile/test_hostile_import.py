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
from tracehouse.model.codec import MAX_FIELD, decode_request


def victim_and(store: Any, hostile: dict[str, Any]) -> Any:
    store.import_batch(batch([item("victim")]))
    return store.import_batch(batch([hostile, item("bystander")]))


def message_sessions(store: Any) -> dict[str, str]:
    return {r["message_id"]: r["session_id"] for r in store.rows("messages")}


def test_another_sessions_message_id_is_refused_and_nothing_moves(make_store):
    store = make_store()
    hostile = item("thief")
    hostile["messages"][0]["messageId"] = ids.message_id("claude-code", "victim", "m0")
    response = victim_and(store, hostile)
    assert [(r.source_session_id, r.status) for r in response.results] == [
        ("thief", "failed"),
        ("bystander", "imported"),
    ]
    assert "messages[0].messageId: not this session's id" in response.results[0].reason
    victim = ids.session_id("claude-code", "victim")
    assert message_sessions(store)[ids.message_id("claude-code", "victim", "m0")] == victim


def test_a_call_naming_another_sessions_child_does_not_re_parent_it(make_store):
    store = make_store()
    parent = item("parent")
    child = item("child", parentSessionId=ids.session_id("claude-code", "parent"))
    parent["toolCalls"][0]["spawnedSessionId"] = ids.session_id("claude-code", "child")
    store.import_batch(batch([parent, child]))
    hostile = item("aaa-hijacker")  # its call id sorts before the parent's
    hostile["toolCalls"][0]["spawnedSessionId"] = ids.session_id("claude-code", "child")
    store.import_batch(batch([hostile]))
    (row,) = store.query(
        "SELECT parent_session_id FROM sessions WHERE session_id = ?",
        (ids.session_id("claude-code", "child"),),
    )
    assert row["parent_session_id"] == ids.session_id("claude-code", "parent")


def test_a_source_attached_to_another_sessions_message_is_refused(make_store):
    store = make_store()
    raw = request([item("victim"), item("thief")])
    raw["items"][1]["sources"][0]["messageId"] = ids.message_id("claude-code", "victim", "m0")
    response = store.import_batch(decode_request(orjson.dumps(raw)))
    assert [r.status for r in response.results] == ["failed", "imported"]
    assert "sources[0].messageId" in response.results[0].reason


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
        (lambda i: i["toolCalls"][0].update(params=_deep(300)), "cannot be stored as JSON"),
        (lambda i: i["messages"][0].update(messageId="msg_other"), "not this session's id"),
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
