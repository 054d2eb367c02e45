"""A session's title when its agent gave none: the first real prompt, as a person would name
the session from it.

Agents wrap what they add to a prompt in tags (`<ide_opened_file>…</ide_opened_file>`,
`<command-name>/clear</command-name>`, `<system-reminder>…`): those are not what was asked. A
prompt that is only such blocks (a slash command, a context note) gives no title, so the next
prompt may; of the rest, the first line that is not a Markdown heading or code fence (a heading
alone: its text), cut to 200 characters. A session whose every prompt is such blocks takes its first
prompt's first line as it is (`first_line`): never blank where a prompt exists.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

LONGEST = 200
# An agent's tag names hold `_` or `-` (`ide_opened_file`, `command-name`); HTML's do not, so a
# prompt that shows some HTML keeps it.
_NAME = r"[A-Za-z]\w*[_-][\w-]*"
_BLOCK = re.compile(rf"<({_NAME})(?:\s[^>]*)?>.*?</\1\s*>", re.DOTALL)
_TAG = re.compile(rf"</?{_NAME}(?:\s[^>]*)?/?>")


def prompt_title(text: str | None) -> str | None:
    """The title a prompt gives, or None when it holds nothing a person asked."""
    if not text:
        return None
    asked = _TAG.sub(" ", _BLOCK.sub("\n", text))
    lines = [line.strip() for line in asked.splitlines() if line.strip()]
    if not lines:
        return None
    plain = next((line for line in lines if not line.startswith(("#", "```", "~~~"))), None)
    chosen = plain if plain is not None else lines[0].lstrip("#").strip()
    return chosen[:LONGEST] or None


def first_line(text: str | None) -> str | None:
    """A prompt's first non-blank line, as it is: the title of last resort."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:LONGEST]
    return None


def title_from_prompts(prompts: Sequence[str | None]) -> str | None:
    """The first prompt's title that a person wrote, else the first prompt's first line."""
    for text in prompts:
        found = prompt_title(text)
        if found:
            return found
    return next((line for line in map(first_line, prompts) if line), None)
