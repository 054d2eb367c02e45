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

import functools
from typing import NamedTuple

import xxhash

from tracehouse.search.snippets import readable

PART_CHARS = 1200  # about 300 tokens: inside Model2Vec's 512 and most endpoints' windows
MAX_PARTS = 8
# What is read of a text to cut its parts: the parts' length twice over, as runs of whitespace
# shrink to one space (reading whole texts, up to a megabyte each, was a third of the cost).
READ_CHARS = 2 * PART_CHARS * MAX_PARTS
TOOL_CHARS = 400  # a call's summary line: what it ran or touched, not its whole input
SOURCES = ("content", "thinking", "tool", "title")
# The ledger table each source's rows are in: its rowid is a passage's `rid`.
TABLE_OF = {
    "content": "messages",
    "thinking": "messages",
    "tool": "tool_calls",
    "title": "sessions",
}


class Passage(NamedTuple):
    source: str  # one of SOURCES
    rid: int | str  # the row in TABLE_OF[source]: its rowid (SQLite) or its id (PostgreSQL)
    part: int
    text: str
    key: int  # text_key(text)


def text_key(text: str) -> int:
    """A text's 64-bit hash as a signed integer, as SQLite and PostgreSQL store one."""
    value = xxhash.xxh3_64_intdigest(text.encode("utf-8", "surrogatepass"))
    return value - (1 << 64) if value >= 1 << 63 else value


def parts(text: str | None) -> list[str]:
    """`text` in parts of about PART_CHARS, cut at whitespace, the first MAX_PARTS of them."""
    if not text:
        return []
    text = " ".join(text[:READ_CHARS].split())
    if len(text) <= PART_CHARS:  # most texts: one part
        return [text] if text else []
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


# Texts repeat across a ledger (a prompt sent again, `git status` run in every session, a
# system note every turn): their parts and keys are worked out once. A memo of pure functions;
# on the bench corpus it took the embedding step from 3.2 s to 2.6 s.
@functools.lru_cache(maxsize=1 << 16)
def keyed_parts(text: str) -> tuple[tuple[str, int], ...]:
    return tuple((piece, text_key(piece)) for piece in parts(text))


@functools.lru_cache(maxsize=1 << 16)
def keyed_line(tool_name: str | None, params: str | None) -> tuple[str, int]:
    line = tool_line(tool_name, params)
    return line, text_key(line)


def of_message(
    rid: int | str, message_type: str | None, content: str | None, thinking: str | None
) -> list[Passage]:
    out = []
    if content and message_type != "tool_result":
        out = [Passage("content", rid, n, t, k) for n, (t, k) in enumerate(keyed_parts(content))]
    if thinking:
        out += [Passage("thinking", rid, n, t, k) for n, (t, k) in enumerate(keyed_parts(thinking))]
    return out


def tool_line(tool_name: str | None, params: str | None) -> str:
    """A tool call as one line: `Bash command: pytest -x`, `Edit file_path: src/app.py …`."""
    line = " ".join(f"{tool_name or 'tool'} {readable(params) or ''}"[: TOOL_CHARS * 2].split())
    return line[:TOOL_CHARS]


def of_tool_call(rid: int | str, tool_name: str | None, params: str | None) -> list[Passage]:
    line, key = keyed_line(tool_name, params)
    return [Passage("tool", rid, 0, line, key)]


def of_session(rid: int | str, title: str | None, task: str | None) -> list[Passage]:
    text = " — ".join(t for t in (title, task) if t and t.strip())
    return [Passage("title", rid, n, t, k) for n, (t, k) in enumerate(keyed_parts(text))]
