"""Labels and their aliases are a function of which sessions a ledger holds: the same sessions
imported in any order, cut into any batches, give the same `sessions.label` and the same
`session_aliases` (a sync's batch size and its workers' timing decide both)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.factory import T0, batch, item
from tracehouse.model import ids
from tracehouse.store.sqlite.store import SqliteStore

# Colliding short labels at several depths: cc-abcdef12 for all, cc-abcdef1211/…22 apart, and
# two that only part at the 12th character; one producer label in the same group.
SOURCES = [
    "abcdef12-1111-4000-8000-000000000001",
    "abcdef12-1122-4000-8000-000000000002",
    "abcdef12-2222-4000-8000-000000000003",
    "abcdef12-2233-4000-8000-000000000004",
    "abcdef12-3333-4000-8000-000000000005",
    "0f0f0f0f-0000-4000-8000-000000000006",
]


def items() -> list[dict[str, Any]]:
    out = [item(sid, createdAtMs=T0 + 1000 * n) for n, sid in enumerate(SOURCES)]
    out.append(item("hinted", labelHint="cc-abcdef12", createdAtMs=T0 + 500))
    return out


def stored(path: Path, order: list[int], cuts: list[int]) -> tuple[Any, Any]:
    given_items = items()
    arranged = [given_items[i] for i in order]
    bounds = sorted({0, len(arranged), *(c % (len(arranged) + 1) for c in cuts)})
    store = SqliteStore(path)
    try:
        for start, end in itertools.pairwise(bounds):
            if arranged[start:end]:
                store.import_batch(batch(arranged[start:end]))
        labels = sorted((r["source_session_id"], r["label"]) for r in store.rows("sessions"))
        aliases = sorted((r["alias"], r["session_id"]) for r in store.rows("session_aliases"))
    finally:
        store.close()
    return labels, aliases


@settings(max_examples=25, deadline=None)
@given(order=st.permutations(range(len(SOURCES) + 1)),
       cuts=st.lists(st.integers(0, 10), max_size=4))  # fmt: skip
def test_any_order_and_any_batches_give_the_same_labels(
    tmp_path_factory: Any, order: list[int], cuts: list[int]
) -> None:
    folder = tmp_path_factory.mktemp("labels")
    expected = stored(folder / "in-order.db", list(range(len(SOURCES) + 1)), [])
    assert stored(folder / "shuffled.db", order, cuts) == expected
    labels, aliases = expected
    assert len({label for _, label in labels}) == len(labels)
    # the short label every member once had is the earliest-created member's
    assert dict(aliases)["cc-abcdef12"] == ids.session_id("claude-code", SOURCES[0])


def test_a_growing_group_writes_each_alias_once(tmp_path: Path) -> None:
    """Sessions stored one at a time into a group of colliding labels (a day of Aider sessions,
    which share their short label) cost each newcomer a few alias writes, not one per member:
    the group's aliases were upserted again every time, n²/2 statements for n sessions."""
    n = 60
    # Aider's shape: a start time, shared by many sessions, then a piece of a hash; the group
    # tells them apart only far down, so each member has several shorter labels as aliases.
    pieces = [ids.stable_id("t", "x", str(i))[2:10] for i in range(n)]
    sources = [f"20250504T1702{i % 6:02d}-{piece}" for i, piece in enumerate(pieces)]
    store = SqliteStore(tmp_path / "ledger.db")
    written: list[str] = []
    try:
        store.conn.set_trace_callback(written.append)
        for i, sid in enumerate(sources):
            store.import_batch(batch([item(sid, createdAtMs=T0 + 1000 * i)]))
        store.conn.set_trace_callback(None)
        labels = {r["label"] for r in store.rows("sessions")}
        aliases = dict((r["alias"], r["session_id"]) for r in store.rows("session_aliases"))
    finally:
        store.close()
    assert len(labels) == n
    assert aliases["cc-20250504"] == ids.session_id("claude-code", sources[0])
    upserts = [s for s in written if s.startswith("INSERT INTO session_aliases")]
    assert len(upserts) <= 2 * n  # were 1,690 for these 60 (52 aliases in the end)
