"""A link chosen among tied candidates does not depend on the order units are processed
(issue #72). Two Codex review children created at the same millisecond (a restored backup or
a synced second home holds such copies) both fall inside the same review window: whichever is
read first, the review call names the same child, and each child keeps the same parent
message. On SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

from tests.conftest import DATA
from tests.hostile.test_order import backfill, ledger, links
from tracehouse.parsers.codex.discover import discover

DAY = Path(".codex/sessions/2026/02/23")
CHILD = "rollout-2026-02-23T13-20-00-019c0000-0000-7000-8000-000000000003.jsonl"
TWIN_ID = "019c0000-0000-7000-8000-000000000009"


def _home_with_twin_reviews(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(DATA / "codex" / "home", home)
    child = (home / DAY / CHILD).read_text()
    twin = CHILD.replace("000000000003", TWIN_ID.rsplit("-", 1)[-1])
    (home / DAY / twin).write_text(child.replace("019c0000-0000-7000-8000-000000000003", TWIN_ID))
    return home / ".codex"


def test_tied_review_children_link_the_same_whatever_the_order(make_store, tmp_path) -> None:
    codex = _home_with_twin_reviews(tmp_path)
    units = discover([codex])
    tied = [u for u in units if u.key.endswith(("000000000002.jsonl", "000000000003.jsonl",
                                                "000000000009.jsonl"))]  # fmt: skip
    assert len(tied) == 3  # the reviewing rollout and its two children
    rest = [u for u in units if u not in tied]
    seen = []
    for order in itertools.permutations(tied):
        store = make_store()
        try:
            backfill(store, codex, rest)
            for unit in order:
                backfill(store, codex, [unit])
            seen.append((links(store), ledger(store)))
        finally:
            store.close()
    first_links, first_ledger = seen[0]
    for got_links, got_ledger in seen[1:]:
        assert got_links == first_links
        assert got_ledger == first_ledger
    children = [s for s in first_ledger["sessions"] if s["spawn_source_tool_call_id"]]
    assert len(children) == 2  # both linked to the review, to the same call and message
    assert len({(c["spawn_tool_call_id"], c["parent_message_id"]) for c in children}) == 1
    [call] = [c for c in first_ledger["tool_calls"] if c["tool_call_id"] == children[0][
        "spawn_tool_call_id"]]  # fmt: skip
    assert call["spawned_session_id"] == min(c["session_id"] for c in children)
