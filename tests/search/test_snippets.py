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
