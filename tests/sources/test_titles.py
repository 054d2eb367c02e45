"""A session's title when its agent gave none: the first prompt a person wrote."""

from __future__ import annotations

import pytest

from tracehouse.model.titles import first_line, prompt_title


@pytest.mark.parametrize(
    ("prompt", "title"),
    [
        ("Fix the flaky test\nin checkout", "Fix the flaky test"),
        ("<ide_selection>lines 5-9 of app.py</ide_selection>\nwhy does this fail?",
         "why does this fail?"),
        ("<command-message>init is analyzing</command-message>\n<command-name>/init</command-name>",
         None),
        ("## User Input\n\n```text\nAdd a weather command\n```", "Add a weather command"),
        ("# Plan", "Plan"),
        ("render <b>bold</b> in the page", "render <b>bold</b> in the page"),
        ("<session_context>\nThis is the Gemini CLI.\n</session_context>", None),
        ("", None),
        ("x" * 300, "x" * 200),
    ],
)  # fmt: skip
def test_the_title_is_what_was_asked(prompt: str, title: str | None) -> None:
    assert prompt_title(prompt) == title


def test_the_last_resort_is_the_first_line_as_it_is() -> None:
    assert first_line("\n  <command-name>/clear</command-name>\n") == (
        "<command-name>/clear</command-name>"
    )
