"""The import contract (DESIGN §4) as every store keeps it, against the SessionStore protocol.

Every backend runs this suite through the `make_store` fixture.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.store.factory import CONTENT, WHEN, batch, item, snapshot
from tracehouse.errors import IdempotencyConflict
from tracehouse.model import ids
from tracehouse.model.tables import MESSAGES


def test_first_import_writes_every_row(store):
    response = store.import_batch(batch([item("a"), item("b", 5)]))
    assert [r.status for r in response.results] == ["imported", "imported"]
    counts = store.info().row_counts
    assert counts["sessions"] == 2
    assert counts["messages"] == 8
    assert counts["turns"] == 2
    assert counts["tool_calls"] == 2
    assert counts["message_sources"] == 2
    row = next(r for r in store.rows("sessions") if r["source_session_id"] == "a")
    assert row["session_id"] == ids.session_id("claude-code", "a")
    assert row["label"] == "cc-a"
    assert row["first_imported_at"] == row["last_imported_at"] is not None


def test_same_batch_twice_skips_and_changes_nothing(store):
    store.import_batch(batch([item("a"), item("b")]))
    before = snapshot(store, (*CONTENT, "watermarks"))
    response = store.import_batch(batch([item("a"), item("b")]))
    assert [r.status for r in response.results] == ["skipped", "skipped"]
    assert response.rows_written == 0
    assert snapshot(store, (*CONTENT, "watermarks")) == before


def test_a_session_repeated_in_one_batch_is_written_once(store):
    response = store.import_batch(batch([item("a"), item("a"), item("b")]))
    assert [r.status for r in response.results] == ["imported", "skipped", "imported"]


def test_changed_fingerprint_upserts_only_changed_rows(store):
    store.import_batch(batch([item("a", 6)]))
    before = snapshot(store)
    changed = item("a", 6)
    changed["messages"][3]["content"] = "edited"
    response = store.import_batch(batch([changed]))
    (result,) = response.results
    assert result.status == "upserted"
    # the session row and the one edited message: nothing else is rewritten
    assert result.rows_written == 2
    after = snapshot(store)
    diff = {
        t: [r for r in after[t] if r not in before[t]] for t in CONTENT if after[t] != before[t]
    }
    assert set(diff) == {"sessions", "messages"}
    assert [m["content"] for m in diff["messages"]] == ["edited"]


def test_unchanged_rows_are_not_rewritten_sqlite_trigger(tmp_path):
    from tracehouse.store.sqlite.store import SqliteStore

    store = SqliteStore(tmp_path / "l.db")
    store.import_batch(batch([item("a", 6)]))
    store.conn.execute("CREATE TABLE writes (tbl TEXT, id TEXT)")
    for table, key in (
        ("messages", "message_id"),
        ("turns", "turn_id"),
        ("tool_calls", "tool_call_id"),
        ("message_sources", "source_id"),
    ):
        store.conn.execute(
            f"CREATE TRIGGER w_{table} AFTER UPDATE ON {table} "
            f"BEGIN INSERT INTO writes VALUES ('{table}', new.{key}); END"
        )
    changed = item("a", 7)
    changed["messages"][0]["content"] = "edited"
    store.import_batch(batch([changed]))
    writes = store.conn.execute("SELECT tbl FROM writes").fetchall()
    assert writes == [("messages",)]  # the edited message; the 7th message is an insert
    assert store.info().row_counts["messages"] == 7
    store.close()


def test_rows_are_never_deleted_by_an_import(store):
    store.import_batch(batch([item("a", 6)]))
    store.import_batch(batch([item("a", 2, text="other")]))
    assert store.info().row_counts["messages"] == 6


def test_one_malformed_item_fails_alone(store):
    items = [item(f"s{i}") for i in range(10)]
    items[4]["messages"][1]["role"] = "robot"
    response = store.import_batch(batch(items))
    statuses = [r.status for r in response.results]
    assert statuses.count("imported") == 9
    failed = [r for r in response.results if r.status == "failed"]
    assert len(failed) == 1
    assert failed[0].source_session_id == "s4"
    assert "messages[1].role" in failed[0].reason
    assert "robot" in failed[0].reason
    assert store.info().row_counts["sessions"] == 9
    assert not response.ok


def test_an_item_the_store_refuses_fails_alone(store):
    valid = batch([item(f"s{i}") for i in range(5)])
    rows = {name: valid.tuples(name) for name in CONTENT[1:]}
    role = MESSAGES.names.index("role")
    s3 = ids.session_id("claude-code", "s3")
    rows["messages"] = [
        (*r[:role], None, *r[role + 1 :]) if r[1] == s3 and r[5] == 1 else r
        for r in rows["messages"]
    ]
    response = store.import_batch(dataclasses.replace(valid, frames={}, rows=rows))
    assert [r.status for r in response.results] == ["imported"] * 3 + ["failed", "imported"]
    assert "role" in response.results[3].reason
    counts = store.info().row_counts
    assert counts["sessions"] == 4
    assert counts["messages"] == 12
    assert s3 not in {r["session_id"] for r in store.rows("turns")}


@pytest.mark.parametrize("refuse", [False, True], ids=["all-written", "one-refused"])
def test_a_many_session_unit_keeps_its_old_cursor_while_an_item_of_it_fails(store, refuse):
    """A Cursor database or prompt history: if the cursor moved past a refused session, the
    next run would not read the unit again and the session would never be retried."""
    from tracehouse.model.contract import WatermarkUpdate

    valid = batch([item(f"s{i}", sourcePath="/db" if i < 2 else "/other") for i in range(3)])
    rows = {name: valid.tuples(name) for name in CONTENT[1:]}
    if refuse:  # s1, from /db, carries a message the store refuses
        role = MESSAGES.names.index("role")
        s1 = ids.session_id("claude-code", "s1")
        rows["messages"] = [
            (*r[:role], None, *r[role + 1 :]) if r[1] == s1 else r for r in rows["messages"]
        ]
    cursors = tuple(
        WatermarkUpdate("claude-code", unit, {"rowid": 9}, {"digests": unit})
        for unit in ("/db", "/other")
    )
    response = store.import_batch(
        dataclasses.replace(valid, frames={}, rows=rows, watermarks=cursors)
    )
    assert [r.status for r in response.results].count("failed") == int(refuse)
    saved = store.watermarks("claude-code")
    assert set(saved) == ({"/other"} if refuse else {"/db", "/other"})


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda i: i["messages"][0].pop("role"), "messages[0].role"),
        (lambda i: i["messages"][0].update(sequence="one"), "messages[0].sequence"),
        (lambda i: i["toolCalls"][0].update(colour="red"), "toolCalls[0].colour"),
        (lambda i: i["session"].update(isSubagent="yes"), "session.isSubagent"),
        (lambda i: i.pop("sourceSessionId"), "sourceSessionId"),
        (lambda i: i["turns"][0].update(status="done"), "turns[0].status"),
    ],
)
def test_validation_names_the_field(store, mutate, field):
    bad = item("bad")
    mutate(bad)
    response = store.import_batch(batch([item("good"), bad]))
    failed = [r for r in response.results if r.status == "failed"]
    assert len(failed) == 1
    assert field in failed[0].reason
    assert response.count("imported") == 1


def test_idempotency_key_replay_returns_stored_response(store):
    first = store.import_batch(batch([item("a"), item("b")], idempotencyKey="k1"))
    before = snapshot(store, (*CONTENT, "import_runs", "import_requests"))
    replay = store.import_batch(batch([item("a"), item("b")], idempotencyKey="k1"))
    assert replay.replayed
    assert replay.to_json() == first.to_json()
    assert [r.status for r in replay.results] == ["imported", "imported"]
    after = snapshot(store, (*CONTENT, "import_runs", "import_requests"))
    runs = after.pop("import_runs")
    assert after == {k: v for k, v in before.items() if k != "import_runs"}
    # The replay is logged as a run of its own: nothing written, both items dedupe hits.
    (logged,) = [r for r in runs if r not in before["import_runs"]]
    assert (logged["skipped"], logged["dedupe_hits"], logged["rows_written"]) == (2, 2, 0)


def test_idempotency_key_with_a_different_request_is_an_error(store):
    store.import_batch(batch([item("a")], idempotencyKey="k1"))
    with pytest.raises(IdempotencyConflict, match="k1"):
        store.import_batch(batch([item("a", 4)], idempotencyKey="k1"))


def lineage_items() -> list[dict]:
    child_sid = "parent-1:agent-x"
    parent = item("parent-1", 4)
    parent["toolCalls"][0].update(toolName="Task", spawnedSourceSessionId=child_sid)
    parent["toolCalls"][0]["sourceMessageId"] = "m1"
    child = item(
        child_sid,
        2,
        isSubagent=True,
        parentSourceSessionId="parent-1",
        taskDescription="look around",
    )
    return [parent, child]


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_lineage_round_trips_in_either_order(make_store, order):
    store = make_store()
    items = lineage_items()
    for index in order:
        store.import_batch(batch([copy.deepcopy(items[index])]))
    child = next(r for r in store.rows("sessions") if r["is_subagent"])
    parent_id = ids.session_id("claude-code", "parent-1")
    tool_call_id = ids.tool_call_id("claude-code", "parent-1", "c0")
    assert child["parent_session_id"] == parent_id
    assert child["parent_message_id"] == ids.message_id("claude-code", "parent-1", "m1")
    assert child["spawn_tool_call_id"] == tool_call_id
    assert child["task_description"] == "look around"
    call = next(r for r in store.rows("tool_calls") if r["tool_call_id"] == tool_call_id)
    assert call["spawned_session_id"] == child["session_id"]


def test_lineage_order_gives_the_same_ledger(make_store):
    a, b = make_store(), make_store()
    parent, child = lineage_items()
    a.import_batch(batch([copy.deepcopy(parent)]))
    a.import_batch(batch([copy.deepcopy(child)]))
    b.import_batch(batch([copy.deepcopy(child)]))
    b.import_batch(batch([copy.deepcopy(parent)]))
    assert snapshot(a, drop=WHEN) == snapshot(b, drop=WHEN)
    # re-importing the child after its link was resolved keeps the link
    b.import_batch(batch([copy.deepcopy(child)]))
    assert snapshot(a, drop=WHEN) == snapshot(b, drop=WHEN)


def review_items() -> list[dict]:
    """A Codex-style review: the child names the parent's call; the call does not name it."""
    parent = item("review-parent", 4)
    parent["toolCalls"][0].update(toolName="review", status="completed")
    parent["toolCalls"][0]["sourceMessageId"] = "m1"
    child = item(
        "review-child",
        2,
        isSubagent=True,
        parentSourceSessionId="review-parent",
        spawnToolCallId="c0",
    )
    return [parent, child]


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_a_child_naming_its_spawning_call_is_linked_both_ways(make_store, order):
    store = make_store()
    items = review_items()
    for index in order:
        store.import_batch(batch([copy.deepcopy(items[index])]))
    call_id = ids.tool_call_id("claude-code", "review-parent", "c0")
    (call,) = store.query("SELECT * FROM tool_calls WHERE tool_call_id = ?", [call_id])
    (child,) = store.query(
        "SELECT * FROM sessions WHERE session_id = ?",
        [ids.session_id("claude-code", "review-child")],
    )
    assert call["spawned_session_id"] == child["session_id"]
    assert child["spawn_tool_call_id"] == call_id
    assert child["parent_message_id"] == ids.message_id("claude-code", "review-parent", "m1")
    # a changed parent rewrites its call from the item, and the store links it again
    changed = copy.deepcopy(items[0])
    changed["toolCalls"][0]["resultJson"] = "reviewed again"
    store.import_batch(batch([changed]))
    (call,) = store.query("SELECT * FROM tool_calls WHERE tool_call_id = ?", [call_id])
    assert call["spawned_session_id"] == child["session_id"]


POOL = [item(f"p{i}", 1 + i % 4) for i in range(6)] + lineage_items() + review_items()


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    order=st.permutations(range(len(POOL))),
    repeats=st.lists(st.integers(0, len(POOL) - 1), max_size=8),
    cuts=st.lists(st.integers(1, 4), min_size=1, max_size=6),
)
def test_any_order_subsets_and_repeats_end_in_the_same_tables(make_store, order, repeats, cuts):
    expected = _reference(make_store)
    store = make_store()
    try:  # closed per example: hypothesis runs dozens of them inside one test
        sequence = list(order)
        for position, index in enumerate(repeats):
            sequence.insert(position * 2 % (len(sequence) + 1), index)
        start = 0
        for size in cuts * len(sequence):
            if start >= len(sequence):
                break
            chunk = sequence[start : start + size]
            start += size
            store.import_batch(batch([copy.deepcopy(POOL[i]) for i in chunk]))
        assert snapshot(store, drop=WHEN) == expected
    finally:
        store.close()


_REFERENCES: dict[object, Any] = {}


def _reference(make_store: Any) -> Any:
    """The pool imported in one batch, once per test and backend (`make_store` is the test's
    own factory): every example compares with the same tables, and a fresh PostgreSQL schema
    per example cost half the test's time."""
    if make_store not in _REFERENCES:
        reference = make_store()
        try:
            reference.import_batch(batch([copy.deepcopy(i) for i in POOL]))
            _REFERENCES.clear()  # another test's factory: no longer needed
            _REFERENCES[make_store] = snapshot(reference, drop=WHEN)
        finally:
            reference.close()
    return _REFERENCES[make_store]
