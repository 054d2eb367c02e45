"""A session's threads: worked out from its turns, stored again at each import of the session,
and written only where they changed."""

from __future__ import annotations

import sqlite3
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.store.factory import batch, item
from tracehouse.model import ids
from tracehouse.model.ids import stable_id
from tracehouse.model.threads import session_threads
from tracehouse.store.labels import rewrite_threads
from tracehouse.store.sqlite.apply import SqliteTx


def reference(session_id: str, turns: list[tuple[str, str | None, int | None]]) -> Any:
    """The threads as the first version of `threads_of` and `active_path` worked them out (one
    list.pop(0) and two Thread objects per thread, the active path walked in full)."""
    rows = sorted(turns, key=lambda t: (t[2] if t[2] is not None else -1, t[0]))
    known = {t[0] for t in rows}
    children: dict[str | None, list[str]] = {}
    for turn, parent, _ in rows:
        children.setdefault(parent if parent in known else None, []).append(turn)
    starts = [(turn, None, None) for turn in children.get(None, [])]
    threads = []
    while starts:
        first, parent_thread, fork = starts.pop(0)
        path, turn = [first], first
        thread_id = stable_id("thr", session_id, first)
        while children.get(turn):
            head, *rest = children[turn]
            starts.extend((other, thread_id, turn) for other in rest)
            path.append(head)
            turn = head
        threads.append((thread_id, tuple(path), parent_thread, fork))
    order = {t[0]: i for i, t in enumerate(rows)}
    threads.sort(key=lambda th: order[th[1][0]])
    active = None
    if rows:
        latest = max(rows, key=lambda t: (t[2] if t[2] is not None else -1, t[0]))[0]
        active = next((th[0] for th in threads if latest in th[1]), None)
    return [(i, *th) for i, th in enumerate(threads)], active


# Turn ids from a small alphabet, parents among them (or unknown, or none), seqs that may tie or
# be missing: forks, rewinds, orphans, self-parents and loops all come up.
_turns = st.dictionaries(
    st.sampled_from([f"t{i}" for i in range(12)]),
    st.tuples(
        st.sampled_from([None, "gone", *(f"t{i}" for i in range(12))]),
        st.one_of(st.none(), st.integers(0, 6)),
    ),
    max_size=12,
).map(lambda d: [(turn, parent, seq) for turn, (parent, seq) in d.items()])


@given(_turns)
def test_threads_are_those_the_first_version_worked_out(turns) -> None:  # type: ignore[no-untyped-def]
    threads, active = session_threads("s", turns)
    found = [(t.seq, t.thread_id, t.turn_ids, t.parent_thread_id, t.fork_turn_id) for t in threads]
    assert (found, active) == reference("s", turns)


def _forked(parent_of_t3: str) -> dict[str, Any]:
    raw = item("forked", 4)
    raw["turns"] = [
        {"sourceTurnId": "t1", "sequence": 0},
        {"sourceTurnId": "t2", "sequence": 1, "parentSourceTurnId": "t1"},
        {"sourceTurnId": "t3", "sequence": 2, "parentSourceTurnId": parent_of_t3},
    ]
    return raw


def test_a_thread_that_is_gone_is_deleted_and_a_changed_one_rewritten(make_store) -> None:  # type: ignore[no-untyped-def]
    store = make_store()
    store.import_batch(batch([_forked("t1")]))  # a rewind to t1: two threads
    assert len(list(store.rows("threads"))) == 2
    store.import_batch(batch([_forked("t2")]))  # the same turns in one line
    (thread,) = store.rows("threads")
    assert thread["session_id"] == ids.session_id("claude-code", "forked")
    assert (thread["seq"], thread["turn_count"], bool(thread["is_active"])) == (0, 3, True)
    assert thread["last_turn_id"] == ids.turn_id("claude-code", "forked", "t3")


class Counting(SqliteTx):
    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self.writes: list[str] = []

    def execute(self, sql: str, params: Any) -> int:
        self.writes.append(sql.split()[0])
        return super().execute(sql, params)


def test_threads_that_did_not_change_are_not_written_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tracehouse.store import open_store

    store = open_store(tmp_path / "ledger.db")
    store.import_batch(batch([_forked("t1")]))
    tx = Counting(store.conn)  # type: ignore[attr-defined]
    rewrite_threads(tx, ids.session_id("claude-code", "forked"))
    assert tx.writes == []
    store.close()
