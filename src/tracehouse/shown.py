"""What tracehouse shows people and agents of what a ledger holds: text with its control
characters escaped, and commands as argument lists with shell quoting (DESIGN §9).

A ledger's rows may come from another machine or a hostile file. A workspace path holding
`ESC ] 0 ;` retitles a terminal, U+202E turns the rest of a line around, and a label such as
`x; rm -rf ~` is a second command once pasted. So everything shown passes `escaped`, and every
command is built as a list and shown by `command_line`, which gives no line at all for an
argument no shell quoting can carry (a control character): the caller says so instead.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

# C0 controls but tab and newline, DEL and C1, the bidirectional marks, embeddings, overrides
# and isolates, and the line and paragraph separators (a line break a terminal does not show).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)
# The same, tab and newline included: what one argument of a command may never hold.
_UNSAFE_IN_ARGUMENT = re.compile(f"{_UNSAFE.pattern[:-1]}\t\n]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# A terminal's styling (colour, bold: `ESC [ … m`), as an agent's captured command output holds
# it (Claude Code's `/context`, its hook notices): presentation only, so it is dropped. Every
# other sequence (a title, a cleared screen, a cursor move) is escaped, in sight.
_STYLE = re.compile("\x1b\\[[0-9;:]*m")


def unstyled(text: str) -> str:
    """`text` without a terminal's styling, for a writer that escapes `[` before `escaped`
    would see the sequence whole (Markdown)."""
    return _STYLE.sub("", text) if "\x1b" in text else text


def escaped(text: str) -> str:
    """`text` with terminal styling dropped and every other control character and bidirectional
    control written as `\\x1b` or `\\u202e`, as git quotes such paths; tabs and line breaks
    stay."""
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(_escape, _STYLE.sub("", text))


def escaped_line(text: str) -> str:
    """One line's worth of `text` (a title, a path): line breaks and tabs escaped too."""
    return _UNSAFE_IN_ARGUMENT.sub(_escape, text)


def holds_controls(text: str) -> bool:
    return _UNSAFE_IN_ARGUMENT.search(text) is not None


def command_line(argv: Sequence[str], cwd: str | None = None) -> str | None:
    """`argv` as a line a shell splits back into exactly `argv` (`cd CWD && …` first when a
    workspace is given); None when an argument holds a character no quoting shows safely."""
    words = [*argv, *([cwd] if cwd is not None else [])]
    if not argv or any(holds_controls(word) for word in words):
        return None
    line = shlex.join(argv)
    return f"cd {shlex.quote(cwd)} && {line}" if cwd is not None else line


def operands(options: Sequence[str], values: Sequence[str]) -> list[str]:
    """`options` then `values`, with `--` between them when a value starts with a dash, so a
    value is never read as an option (`claude --resume --dangerously-skip-permissions`)."""
    if any(value.startswith("-") for value in values):
        return [*options, "--", *values]
    return [*options, *values]
