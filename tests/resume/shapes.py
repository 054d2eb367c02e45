"""What a round trip compares: a conversation's steps as plain values."""

from __future__ import annotations

from typing import Any

from tracehouse.resume.conversation import Conversation


def shape(conv: Conversation) -> list[tuple[Any, ...]]:
    """Every step: role, text, a notice's speaker, and each call's name, params and result."""
    return [
        (s.role, s.text, s.speaker if s.role == "notice" else None,
         [(c.name, c.params, c.result, c.failed) for c in s.calls])
        for s in conv.steps
    ]  # fmt: skip


def said(conv: Conversation) -> list[tuple[str, str]]:
    """The prompts and answers the model saw, in order (empty answers, mere calls, left out)."""
    return [(s.role, s.text) for s in conv.spoken if s.role in ("user", "assistant") and s.text]


def lacking(wanted: list[tuple[str, str]], got: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """What of `wanted` (role, text) `got` lacks, in order: each found at the start of a text
    of the same role (an answer may go on with calls written as text after it)."""
    i = 0
    for role, text in got:
        if i < len(wanted) and role == wanted[i][0] and text.startswith(wanted[i][1].rstrip()):
            i += 1
    return wanted[i:]
