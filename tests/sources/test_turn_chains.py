"""Turn chains (`parent_turn_id`): a Claude Code prompt continues the turn its `parentUuid` line
was written in, so a rewind branches the history at the fork point; however the file is cut
into chunks, the chain is the same."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import DATA
from tests.sources.suite import parse_all
from tracehouse.parsers import claude_code
from tracehouse.parsers.base import Unit

FORK_HOME = DATA / "claude" / "fork-home"


def chain(unit: Unit, budget: int = 1 << 30) -> dict[str, str | None]:
    """First prompt of each turn → the first prompt of its parent turn."""
    _item, frames, rejects = parse_all(claude_code, unit, budget)
    assert rejects == []
    messages = {m["message_id"]: m["content"] for m in frames["messages"].to_dicts()}
    turns = {t["turn_id"]: t for t in frames["turns"].to_dicts()}

    def prompt(turn: dict) -> str:
        return messages[orjson.loads(turn["query_message_ids"])[0]]

    return {
        prompt(t): prompt(turns[t["parent_turn_id"]]) if t["parent_turn_id"] else None
        for t in turns.values()
    }


@pytest.mark.parametrize("budget", [1 << 30, 700, 300])
def test_a_rewind_branches_the_chain_at_the_fork_point(budget: int) -> None:
    (unit,) = claude_code.discover([FORK_HOME / ".claude"])
    assert chain(unit, budget) == {
        "Start a shopping cart module": None,
        "Add a total() method": "Start a shopping cart module",
        "Now add tax": "Add a total() method",
        "Round to cents": "Now add tax",
        "Actually, add discounts instead": "Add a total() method",  # the rewind
        "And a test": "Actually, add discounts instead",
    }


def test_the_dag_fork_excerpt_branches_where_its_lines_do(corpus: Path) -> None:
    path = corpus / "excerpts" / "claude-code" / "dag_fork.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not in this corpus")
    found = chain(Unit("claude-code", str(path), str(path.parent), {"session": path.stem}))
    assert found["Fork from c"] == found["Last in s1"] == "Middle"  # two children of one turn
    assert found["Middle"] == "Start" and found["Start"] is None


def test_threads_cut_the_rewind_into_two_histories_and_the_view_follows_the_active_one() -> None:
    from tracehouse.model.threads import active_path, active_view, threads_of

    (unit,) = claude_code.discover([FORK_HOME / ".claude"])
    _item, frames, _ = parse_all(claude_code, unit)
    turns = sorted(frames["turns"].to_dicts(), key=lambda t: t["seq"])
    main, branch = threads_of("s", turns)
    assert [len(main.turn_ids), len(branch.turn_ids)] == [4, 2]
    assert branch.parent_thread_id == main.thread_id and branch.fork_turn_id == turns[1]["turn_id"]
    assert active_path(turns) == [turns[i]["turn_id"] for i in (0, 1, 4, 5)]
    messages = sorted(frames["messages"].to_dicts(), key=lambda m: m["seq"])
    detail = {"session": {"session_id": "s"}, "turns": turns, "messages": messages,
              "tool_calls": [], "sources": []}  # fmt: skip
    shown = [m["content"] for m in active_view(detail, "--all-branches")["messages"]]
    assert "Round to cents" not in shown and "And a test" in shown
    (notice,) = [c for c in shown if c.startswith("⎇")]
    assert "a branch of 2 turn(s)" in notice and "Now add tax" in notice


def test_a_long_abandoned_branch_is_counted_without_recursing() -> None:
    from tracehouse.model.threads import active_view

    # t0 → t1 … t2000 (abandoned), and t0 → u (the rewind, latest)
    turns = [{"turn_id": "t0", "parent_turn_id": None, "seq": 0}]
    turns += [{"turn_id": f"t{i}", "parent_turn_id": f"t{i - 1}", "seq": i} for i in range(1, 2001)]
    turns.append({"turn_id": "u", "parent_turn_id": "t0", "seq": 2001})
    messages = [{"message_id": f"m-{t['turn_id']}", "turn_id": t["turn_id"], "role": "user",
                 "content": t["turn_id"], "created_at": None} for t in turns]  # fmt: skip
    detail = {"session": {"session_id": "s"}, "turns": turns, "messages": messages,
              "tool_calls": [], "sources": []}  # fmt: skip
    shown = [m["content"] for m in active_view(detail, "--all-branches")["messages"]]
    assert shown[0] == "t0" and shown[-1] == "u"
    assert "a branch of 2000 turn(s)" in shown[1]
