"""`last` and `last~N` wherever a session is named (issue #70): the most recently changed
session that is no subagent, and the ones before it; never a label a push could take."""

from __future__ import annotations

import pytest

from tests.store.factory import T0, batch, item
from tracehouse.store.reads import SessionNotFound, find_session


def test_last_is_the_most_recent_session_and_last_n_the_ones_before(store) -> None:  # type: ignore[no-untyped-def]
    sessions = [item(f"s{n}", 2, updatedAtMs=T0 + n * 60_000) for n in range(3)]
    child = item("s9", 2, updatedAtMs=T0 + 10 * 60_000, isSubagent=True,
                 parentSourceSessionId="s0")  # fmt: skip
    assert store.import_batch(batch([*sessions, child])).ok
    assert find_session(store, "last")["source_session_id"] == "s2"  # the subagent is not
    assert find_session(store, "last~1")["source_session_id"] == "s1"
    assert find_session(store, "last~2")["source_session_id"] == "s0"
    with pytest.raises(SessionNotFound, match="holds 3 sessions; the oldest is last~2"):
        find_session(store, "last~3")


def test_last_is_no_label_a_push_can_take(store) -> None:  # type: ignore[no-untyped-def]
    result = store.import_batch(batch([item("s1", 2, labelHint="last")]))
    (failed,) = result.results
    assert failed.status == "failed" and "'last' is reserved" in (failed.reason or "")
