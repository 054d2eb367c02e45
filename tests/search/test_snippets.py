"""Snippets read as text: a tool call's JSON parameters without their escapes (issue #44)."""

from __future__ import annotations

import orjson

from tracehouse.search.query import parse
from tracehouse.search.snippets import first_snippet, readable


def test_a_snippet_of_json_parameters_shows_no_escapes() -> None:
    params = orjson.dumps({"command": 'grep -n "rotate" keys.py\nls', "timeout": 5}).decode()
    assert "\\n" in params and '\\"' in params
    cut = first_snippet([params], parse("rotate"), 12)
    assert cut is not None and "\\" not in cut
    assert 'command: grep -n "' in cut and "keys.py" in cut


def test_text_that_is_not_json_is_left_as_it_is() -> None:
    for text in ("plain words", '{"cut short', "[1, 2", None, ""):
        assert readable(text) == text
    assert readable('["a", {"b": null, "c": [true, 2]}]') == "a c: true c: 2"


def test_identical_hits_of_a_session_are_one_with_their_count() -> None:
    from tracehouse.search.hits import Hit, merge

    def hit(i: int, session: str = "s1", snippet: str = "ls «x»") -> Hit:
        return Hit("tool", f"c{i}", None, session, "cc-1", "claude-code", None,
                   f"2026-01-0{i}", snippet, 1.0, "Bash")  # fmt: skip

    merged = merge([hit(1), hit(2), hit(3, "s2"), hit(4, snippet="other «x»")], 10)
    assert [(h.id, h.repeats) for h in merged] == [("c4", 1), ("c3", 1), ("c2", 2)]
    assert merged[2].to_json()["repeats"] == 2
