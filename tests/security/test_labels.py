"""A label once shown keeps pointing where it pointed (DESIGN §9, issue #63): bob's push can
neither take alice's label by claiming an earlier `createdAtMs`, nor by an id that ends like
hers, nor by hinting a label another session already holds; and a hint is brought to the safe
label characters or refused, per item, with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from tests.security.team import UUID_A, push, read, session_item
from tracehouse.store import open_store

EARLY = 1577836800000  # 2020-01-01: "mine came first"


def _owner(team: Any, label: str) -> str:
    answer = read(team, f"/v1/sessions/{label}")
    assert answer.status_code == 200, answer.text
    return str(answer.json()["host"])


def _labels(team: Any) -> dict[str, tuple[str, str]]:
    store = open_store(team.address)
    try:
        return {s["label"]: (s["host"], s["source_session_id"]) for s in store.rows("sessions")}
    finally:
        store.close()


def test_an_earlier_created_at_takes_no_label(team: Any) -> None:
    [mine] = push(team, "alice", session_item("claude-code", "s-alice", labelHint="deploy-fix"))
    assert mine["sessionLabel"] == "deploy-fix"
    [theirs] = push(team, "bob", session_item("claude-code", "s-bob", labelHint="deploy-fix",
                                              createdAtMs=EARLY))  # fmt: skip
    assert theirs["sessionLabel"].startswith("deploy-fix-")
    assert _owner(team, "deploy-fix") == "alice"
    assert team.get("/s/deploy-fix", follow_redirects=False).status_code in (200, 303)
    assert _labels(team)["deploy-fix"] == ("alice", "s-alice")


def test_an_id_ending_like_mine_takes_no_label(team: Any) -> None:
    alice_id = "019a1111-2222-7333-8444-5555c0ffee42"
    bob_id = "019a9999-8888-7777-8666-0000c0ffee42"  # the same last 8 hex digits
    [mine] = push(team, "alice", session_item("codex", alice_id))
    assert mine["sessionLabel"] == "cx-c0ffee42"
    [theirs] = push(team, "bob", session_item("codex", bob_id, createdAtMs=EARLY))
    assert theirs["sessionLabel"] != "cx-c0ffee42"
    assert _labels(team)["cx-c0ffee42"] == ("alice", alice_id)
    assert _owner(team, "cx-c0ffee42") == "alice"


def test_a_hint_naming_a_label_already_shown_gets_another(team: Any) -> None:
    push(team, "alice", session_item("codex", UUID_A))
    other = UUID_A[:-8] + "aaaaaaaa"
    push(team, "alice", session_item("codex", other))  # both grow: cx-000c0ffee4, …
    grown = {label for label, (_, sid) in _labels(team).items() if sid == UUID_A}.pop()
    [theirs] = push(team, "bob", session_item("claude-code", "s-bob", labelHint=grown))
    assert theirs["sessionLabel"] != grown
    labels = _labels(team)
    assert labels[grown] == ("alice", UUID_A) and len(labels) == 3


def test_the_same_machine_keeps_todays_rule(team: Any) -> None:
    """Without another machine, a collision grows both labels and the short one stays an
    alias of the earliest-created, whatever the order (the property tests cover orders)."""
    push(team, "alice", session_item("claude-code", "s-1", labelHint="fix"))
    push(team, "alice", session_item("claude-code", "s-2", labelHint="fix", createdAtMs=EARLY))
    assert all(label.startswith("fix-") for label in _labels(team))
    assert read(team, "/v1/sessions/fix").json()["sourceSessionId"] == "s-2"


@pytest.mark.parametrize(("hint", "label"), [
    ("Deploy Fix", "deploy-fix"),
    ("esc; rm -rf ~ `id`", "esc-rm-rf-id"),
    ("a/b", "a-b"),
    ("line\nbreak\x00nul", "line-break-nul"),
    ("\u202eevil\u202c", "evil"),
    ("--dangerously-skip-permissions", "dangerously-skip-permissions"),
    ("ｆｕｌｌｗｉｄｔｈ", "fullwidth"),
])  # fmt: skip
def test_a_hint_is_brought_to_the_safe_characters(team: Any, hint: str, label: str) -> None:
    [result] = push(team, "bob", session_item("claude-code", "s-x", labelHint=hint))
    assert result["status"] == "imported" and result["sessionLabel"] == label
    assert read(team, f"/v1/sessions/{label}").status_code == 200


def test_a_hint_with_nothing_a_label_can_hold_is_refused_alone(team: Any) -> None:
    results = push(team, "bob", session_item("claude-code", "s-1", labelHint="\u202e;;/"),
                   session_item("claude-code", "s-2", labelHint="ok"))  # fmt: skip
    assert results[0]["status"] == "failed"
    assert "session.labelHint" in results[0]["reason"]
    assert results[1]["status"] == "imported"
