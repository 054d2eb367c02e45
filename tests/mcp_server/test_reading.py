"""`read_session` pages: never more than the budget, every entry once and in order, and an
entry larger than a page cut to it rather than dropped."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracehouse.errors import TracehouseError
from tracehouse.mcp_server.reading import estimate_tokens, fit, read_session
from tracehouse.store import SessionStore

PAGING = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def labels(store: SessionStore) -> list[str]:
    return [r["label"] for r in store.query("SELECT label FROM sessions ORDER BY label")]


@given(text=st.text(max_size=400), tokens=st.integers(0, 200))
def test_the_estimate_never_undercounts_what_it_fits(text: str, tokens: int) -> None:
    cut = fit(text, tokens)
    assert text.startswith(cut) and estimate_tokens(cut) <= tokens
    assert estimate_tokens(text) >= len(text.encode("ascii", "ignore")) / 4
    assert estimate_tokens("聊天记录") == 4  # a CJK character is a token of its own


@PAGING
@given(data=st.data(), budget=st.integers(500, 3000), result_chars=st.integers(0, 3000))
def test_paging_shows_every_entry_once_within_the_budget(
    ledger: SessionStore, data: st.DataObject, budget: int, result_chars: int
) -> None:
    label = data.draw(st.sampled_from(labels(ledger)))
    start: int | None = 0
    seen: list[int] = []
    while start is not None:
        page = read_session(ledger, label, start=start, budget=budget, result_chars=result_chars)
        assert estimate_tokens(page.text) <= budget, (label, start)
        assert page.first == start
        seen.extend(range(page.first, page.next if page.next is not None else page.entries))
        if page.next is not None:
            assert page.next > start
            assert f'read_session(session="{label}", start={page.next})' in page.text
        start = page.next
    assert seen == list(range(page.entries))


def test_a_long_result_is_cut_and_says_how_to_see_it(ledger: SessionStore) -> None:
    for label in labels(ledger):
        whole = read_session(ledger, label, budget=100_000, result_chars=400_000).text
        short = read_session(ledger, label, budget=100_000, result_chars=10).text
        if "result:" in whole and "more chars: result_chars=" in short:
            assert "more chars" not in whole  # a budget past the result shows all of it
            return
    pytest.fail("no session with a tool result longer than 10 characters")


def test_wrong_arguments_are_named(ledger: SessionStore) -> None:
    label = labels(ledger)[0]
    for args, message in [
        (dict(budget=10), "budget 10: from 500"),
        (dict(result_chars=-1), "result_chars -1"),
        (dict(start=-2), "start -2"),
        (dict(start=0, around="x"), "start or around"),
        (dict(start=10_000), "start 10000"),
        (dict(around="nope"), "around 'nope'"),
    ]:
        with pytest.raises(TracehouseError, match=message):
            read_session(ledger, label, **args)  # type: ignore[arg-type]
    with pytest.raises(TracehouseError, match="no session matches"):
        read_session(ledger, "zz-00000000")


def test_subagents_are_links_to_read(ledger: SessionStore) -> None:
    parent = ledger.query(
        "SELECT p.label AS parent, c.label AS child FROM sessions c"
        " JOIN sessions p ON p.session_id = c.parent_session_id"
        " WHERE c.spawn_tool_call_id IS NOT NULL ORDER BY 1 LIMIT 1"
    )[0]
    text = read_session(ledger, parent["parent"], budget=100_000).text
    assert f'read_session(session="{parent["child"]}")' in text
    child = read_session(ledger, parent["child"]).text
    assert f"subagent of {parent['parent']}" in child


def test_since_reads_only_what_came_in_from_then_and_pages_on_with_it(
    ledger: SessionStore,
) -> None:
    """`since` (issue #70: the message design's messages-since): the page holds the messages
    from that time on, says how many earlier ones it leaves out, and its next-page call keeps
    the time; a time after the last message leaves none."""
    row = ledger.query(
        "SELECT s.label, count(*) AS n FROM messages m JOIN sessions s USING (session_id)"
        " WHERE m.created_at IS NOT NULL GROUP BY s.label ORDER BY n DESC, s.label LIMIT 1"
    )[0]
    times = [r["created_at"] for r in ledger.query(
        "SELECT m.created_at FROM messages m JOIN sessions s USING (session_id)"
        " WHERE s.label = ? ORDER BY m.created_at", [row["label"]])]  # fmt: skip
    middle = times[len(times) // 2]
    earlier = sum(t < middle for t in times)
    page = read_session(ledger, row["label"], since=middle, budget=500)
    assert f"(messages since {middle}; {earlier:,} earlier not shown)" in page.text
    if page.next is not None:
        assert f'since="{middle}", start={page.next})' in page.text
    assert page.entries < read_session(ledger, row["label"]).entries
    late = read_session(ledger, row["label"], since="2099-01-01", budget=100_000)
    assert f"{len(times):,} earlier not shown" in late.text
    with pytest.raises(TracehouseError, match="since"):
        read_session(ledger, row["label"], since="yesterday-ish")
