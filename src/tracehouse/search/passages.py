"""What search by meaning embeds of each row: the passages people look for.

    content    a message's text (not a tool result's: its call stands for it), in parts
    thinking   a message's thinking, in parts
    tool       a tool call as its summary line: the tool and its parameters as `key: value`
    title      a session's title and task description

A long text is cut into parts of about PART_CHARS at whitespace, so that each part's vector
stands for one passage rather than the average of a whole log pasted into a prompt; a static
model averages its tokens and a windowed one would drop what is past its window. Only the first
MAX_PARTS parts of a text are embedded (lexical search still finds every word of it).

Each passage is keyed by the hash of its text (`text_key`): a text seen before (the same
prompt sent again, `git status` run in every session) is embedded once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import xxhash

from tracehouse.search.snippets import readable

PART_CHARS = 1200  # about 300 tokens: inside Model2Vec's 512 and most endpoints' windows
MAX_PARTS = 8
TOOL_CHARS = 400  # a call's summary line: what it ran or touched, not its whole input
SOURCES = ("content", "thinking", "tool", "title")
# The ledger table each source's rows are in: its rowid is a passage's `rid`.
TABLE_OF = {
    "content": "messages",
    "thinking": "messages",
    "tool": "tool_calls",
    "title": "sessions",
}
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Passage:
    source: str  # one of SOURCES
    rid: int | str  # the row in TABLE_OF[source]: its rowid (SQLite) or its id (PostgreSQL)
    part: int
    text: str

    @property
    def key(self) -> int:
        return text_key(self.text)


def text_key(text: str) -> int:
    """A text's 64-bit hash as a signed integer, as SQLite and PostgreSQL store one."""
    value = xxhash.xxh3_64_intdigest(text.encode("utf-8", "surrogatepass"))
    return value - (1 << 64) if value >= 1 << 63 else value


def parts(text: str | None) -> list[str]:
    """`text` in parts of about PART_CHARS, cut at whitespace, the first MAX_PARTS of them."""
    if not text:
        return []
    text = _SPACE.sub(" ", text).strip()
    out: list[str] = []
    start = 0
    while start < len(text) and len(out) < MAX_PARTS:
        end = min(len(text), start + PART_CHARS)
        if end < len(text):
            cut = text.rfind(" ", start + PART_CHARS // 2, end)
            end = cut if cut > start else end
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    return out


def of_message(
    rid: int | str, message_type: str | None, content: str | None, thinking: str | None
) -> Iterator[Passage]:
    if message_type != "tool_result":
        for n, piece in enumerate(parts(content)):
            yield Passage("content", rid, n, piece)
    for n, piece in enumerate(parts(thinking)):
        yield Passage("thinking", rid, n, piece)


def tool_line(tool_name: str | None, params: str | None) -> str:
    """A tool call as one line: `Bash command: pytest -x`, `Edit file_path: src/app.py …`."""
    line = _SPACE.sub(" ", f"{tool_name or 'tool'} {readable(params) or ''}").strip()
    return line[:TOOL_CHARS]


def of_tool_call(rid: int | str, tool_name: str | None, params: str | None) -> Iterator[Passage]:
    yield Passage("tool", rid, 0, tool_line(tool_name, params))


def of_session(rid: int | str, title: str | None, task: str | None) -> Iterator[Passage]:
    text = " — ".join(t for t in (title, task) if t and t.strip())
    for n, piece in enumerate(parts(text)):
        yield Passage("title", rid, n, piece)
