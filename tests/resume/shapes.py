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
