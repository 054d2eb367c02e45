"""A session's life in the ledger beyond imports, on both stores: its history of changes, and
deleting it (nothing of it left, seed 003's rule), its tombstone, and restoring it."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from tests.store.factory import T0, batch, item
from tracehouse.model import ids
from tracehouse.model.tables import ALL_TABLES
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import session_history
from tracehouse.upkeep.deletion import HasSubagents, delete_sessions, restore_sessions
from tracehouse.upkeep.verify import verify_store

PARENT, CHILD = "parent-1", "parent-1:agent-x"
BYSTANDER = ids.session_label("claude-code", "bystander")


def family() -> list[dict[str, Any]]:
    parent = item(PARENT, 4, text="zebracrossing")
    parent["toolCalls"][0].update(toolName="Task", spawnedSourceSessionId=CHILD,
                                  sourceMessageId="m1")  # fmt: skip
    child = item(CHILD, 2, text="okapiwhistle", isSubagent=True, parentSourceSessionId=PARENT)
    return [parent, child, item("bystander", 3)]


def every_value(store: SessionStore, skip: set[str]) -> list[tuple[str, str]]:
    """(table, value) of every cell of every table, JSON as its text."""
    cells = []
    for table in ALL_TABLES:
        if table.name in skip:
            continue
        for row in store.rows(table.name):
            for value in row.values():
                text = value if isinstance(value, str) else orjson.dumps(value).decode()
                cells.append((table.name, text))
    return cells


def test_a_deleted_session_leaves_nothing_of_it(make_store) -> None:  # type: ignore[no-untyped-def]
    store = make_store()
    assert store.import_batch(batch(family())).ok
    keys = {"sessions": "session_id", "messages": "message_id", "turns": "turn_id",
            "tool_calls": "tool_call_id"}  # fmt: skip
    gone_ids = {
        r[k]
        for t, k in keys.items()
        for r in store.rows(t)
        if r["session_id"] in {ids.session_id("claude-code", s) for s in (PARENT, CHILD)}
    }
    deleted = delete_sessions(store, ["cc-parent1"], with_subagents=True)
    assert sorted(r["label"] for r in deleted) == ["cc-parent1", "cc-x"]
    # The tombstones name the sessions; nothing else in the ledger does, not even a link.
    left = [(t, v) for t, v in every_value(store, {"session_tombstones", "import_requests"})
            if any(i in v for i in gone_ids)]  # fmt: skip
    assert left == []
    assert not store.search("zebracrossing") and not store.search("okapiwhistle")
    assert [r["source_session_id"] for r in store.rows("sessions")] == ["bystander"]
    assert len(list(store.rows("message_sources"))) == 1
    assert verify_store(store).ok


def test_a_session_with_subagents_is_not_deleted_without_them(make_store) -> None:  # type: ignore[no-untyped-def]
    store = make_store()
    store.import_batch(batch(family()))
    with pytest.raises(HasSubagents, match="cc-x"):
        delete_sessions(store, ["cc-parent1"])
    assert len(list(store.rows("sessions"))) == 3


def test_deleting_a_child_unlinks_its_spawning_call(make_store) -> None:  # type: ignore[no-untyped-def]
    store = make_store()
    store.import_batch(batch(family()))
    delete_sessions(store, ["cc-x"])
    calls = {r["session_id"]: r for r in store.rows("tool_calls")}
    call = calls[ids.session_id("claude-code", PARENT)]
    assert call["spawned_session_id"] is None and call["spawned_source_session_id"] is None
    assert verify_store(store).ok  # the unlinked call's fingerprint was taken again


def test_a_deleted_session_stays_out_until_restored(make_store) -> None:  # type: ignore[no-untyped-def]
    store = make_store()
    store.import_batch(batch(family()))
    delete_sessions(store, [BYSTANDER])
    again = store.import_batch(batch([item("bystander", 3)]))
    (result,) = again.results
    assert result.status == "skipped" and f"sessions restore {BYSTANDER}" in result.reason
    assert "bystander" not in {r["source_session_id"] for r in store.rows("sessions")}
    (stone,) = restore_sessions(store, [BYSTANDER])
    assert stone["source_session_id"] == "bystander"
    assert store.import_batch(batch([item("bystander", 3)])).results[0].status == "imported"
    with pytest.raises(LookupError):
        restore_sessions(store, [BYSTANDER])


def test_history_keeps_every_change_and_only_changes(make_store) -> None:  # type: ignore[no-untyped-def]
    store = make_store()
    first = item("a", 3)
    store.import_batch(batch([first]))
    store.import_batch(batch([copy.deepcopy(first)]))  # unchanged: skipped, no history
    changed = copy.deepcopy(first)
    changed["messages"][1]["content"] = "edited"
    store.import_batch(batch([changed]))
    rows = session_history(store, ids.session_id("claude-code", "a"))
    assert [r["status"] for r in rows] == ["imported", "upserted"]
    assert rows[0]["fingerprint_before"] is None
    assert rows[1]["fingerprint_before"] == rows[0]["fingerprint_after"]
    assert rows[1]["fingerprint_after"] != rows[0]["fingerprint_after"]
    assert rows[1]["rows_written"] == 2  # the session row and the edited message


def test_colliding_labels_are_lengthened_and_the_old_one_keeps_resolving(make_store) -> None:  # type: ignore[no-untyped-def]
    from tracehouse.store.reads import find_session

    store = make_store()
    first, second = "abcdef12-1111-4000-8000-000000000001", "abcdef12-2222-4000-8000-000000000002"
    (shown,) = store.import_batch(batch([item(first)])).results
    assert shown.session_label == "cc-abcdef12"
    # a later session: the short label stays with the earlier one, whatever came first
    (then,) = store.import_batch(batch([item(second, createdAtMs=T0 + 60_000)])).results
    labels = {r["source_session_id"]: r["label"] for r in store.rows("sessions")}
    assert labels == {first: "cc-abcdef1211", second: "cc-abcdef1222"}
    assert then.session_label == "cc-abcdef1222"
    # what was shown before still opens the session it named, and re-imports keep the labels
    assert find_session(store, "cc-abcdef12")["source_session_id"] == first
    changed = item(first, 5)
    (again,) = store.import_batch(batch([changed])).results
    assert again.status == "upserted" and again.session_label == "cc-abcdef1211"
    assert {r["label"] for r in store.rows("sessions")} == set(labels.values())
    # a producer's own label collides too
    hint = item("z1", labelHint="cc-abcdef12", createdAtMs=T0 + 120_000)
    (hinted,) = store.import_batch(batch([hint])).results
    assert hinted.session_label.startswith("cc-abcdef12-")
    assert find_session(store, "cc-abcdef12")["source_session_id"] == first


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0)])
def test_labels_do_not_depend_on_the_order_sessions_arrive_in(make_store, order) -> None:  # type: ignore[no-untyped-def]
    store = make_store()
    sources = ["abcdef12-1111-4000-8000-000000000001", "abcdef12-2222-4000-8000-000000000002",
               "abcdef12-2233-4000-8000-000000000003"]  # fmt: skip
    for index in order:
        store.import_batch(batch([item(sources[index], createdAtMs=T0 + index)]))
    labels = {r["source_session_id"]: r["label"] for r in store.rows("sessions")}
    assert labels == dict(zip(sources, ["cc-abcdef121111", "cc-abcdef122222",
                                        "cc-abcdef122233"], strict=True))  # fmt: skip
    # every shorter label is an alias, of the earliest session that had it
    aliases = {r["alias"]: r["session_id"] for r in store.rows("session_aliases")}
    session_of = {r["label"]: r["session_id"] for r in store.rows("sessions")}
    assert aliases == {"cc-abcdef12": session_of["cc-abcdef121111"],
                       "cc-abcdef1211": session_of["cc-abcdef121111"],
                       "cc-abcdef1222": session_of["cc-abcdef122222"]}  # fmt: skip


def test_the_store_keeps_a_sessions_threads(make_store) -> None:  # type: ignore[no-untyped-def]
    store = make_store()
    raw = item("forked", 4)
    raw["turns"] = [
        {"sourceTurnId": "t1", "sequence": 0},
        {"sourceTurnId": "t2", "sequence": 1, "parentSourceTurnId": "t1"},
        {"sourceTurnId": "t3", "sequence": 2, "parentSourceTurnId": "t1"},  # a rewind to t1
    ]
    store.import_batch(batch([raw, item("plain", 2)]))
    rows = sorted(store.rows("threads"), key=lambda r: (r["session_id"], r["seq"]))
    forked = [r for r in rows if r["session_id"] == ids.session_id("claude-code", "forked")]
    assert [(r["seq"], r["turn_count"], bool(r["is_active"])) for r in forked] == [
        (0, 2, False),
        (1, 1, True),
    ]
    assert forked[1]["parent_thread_id"] == forked[0]["thread_id"]
    assert forked[1]["fork_turn_id"] == ids.turn_id("claude-code", "forked", "t1")
    assert len(rows) == 3  # the plain session is one thread
    delete_sessions(store, [ids.session_label("claude-code", "forked")])
    assert len(list(store.rows("threads"))) == 1
