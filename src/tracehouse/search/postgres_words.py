"""The text PostgreSQL's full-text columns index, prepared by the writer (migration 0012).

Search splits text into words the way `search/query.py`'s `words_of` splits a query: at every
character that is not a letter or a digit, with case and diacritics folded (SQLite's `unicode61
remove_diacritics 2` indexes nearly the same words). The writer hands `to_tsvector('simple', …)`
text in which those words are all that is left, so PostgreSQL's parser finds exactly them: left
alone it keeps `billing/webhooks.py`, `a-b`, `x@y.z` or `1.2.3` whole (paths, hyphenated words,
emails, versions), keeps `café` accented where a query for `cafe` looks, and keeps combining
marks inside their word.

Migration 0003 did the splitting on the server, with `regexp_replace(…, '[^[:alnum:]]+', ' ',
'g')` in generated columns: in a backfill that regexp was a fifth of the server's CPU (7.7 s for
the 157 MB of one corpus's tool calls, against 11 s for `to_tsvector` itself), and it folded no
accent. Here it costs the client about 1 s for the 210 M characters a corpus of 880 MB indexes:
every ASCII character that is not a letter or a digit becomes a space in one `bytes.translate`
of the UTF-8 (480 MB/s, where `re.sub` or any `str` method runs at 30-50 MB/s), and each run of
other characters is folded on its own, each distinct short run once. Each character of a script
written without spaces (Chinese, Japanese, Thai, …) becomes a word of its own there
(`search/scripts.py`), as a query in them is split.
"""

from __future__ import annotations

import codecs
import functools
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracehouse.search.query import folded
from tracehouse.search.scripts import postgres_class, segmented

if TYPE_CHECKING:
    import psycopg

# What 0003 indexed of a long text: a tsvector holds at most 1 MB.
LIMIT = 200_000
_ALNUM = (string.ascii_letters + string.digits).encode()
_NOT_ALNUM = bytes(b for b in range(128) if b not in _ALNUM)
_TO_SPACES = bytes.maketrans(_NOT_ALNUM, b" " * len(_NOT_ALNUM))


def _fold(run: str) -> bytes:
    """A run of non-ASCII characters as `words_of` sees it: folded, and any character that is
    not a letter or a digit a space. The run stands between ASCII characters, which decompose
    to themselves, and no lower case depends on its neighbours once a final sigma is σ: folding
    the run alone is folding it in its word."""
    return "".join(c if c.isalnum() else " " for c in segmented(folded(run))).encode("utf-8")


# Short runs repeat (`→` starts every line of a file read by Claude Code): each distinct one is
# folded once. Long ones (a paragraph of CJK) are not kept.
_fold_short = functools.lru_cache(maxsize=8192)(_fold)
_SHORT = 32


def _fold_error(error: UnicodeError) -> tuple[bytes, int]:
    assert isinstance(error, UnicodeEncodeError)
    run = error.object[error.start : error.end]
    return (_fold_short(run) if len(run) <= _SHORT else _fold(run)), error.end


# The ASCII encoder finds the runs of other characters in C and hands each run to this
# handler, whose bytes it writes as they are: twice as fast as finding them with `re`.
_FOLD = "tracehouse-search-words"
codecs.register_error(_FOLD, _fold_error)


def search_text(parts: Sequence[str | None]) -> str:
    """The parts joined by spaces and cut at LIMIT characters, as their words with spaces
    between (ASCII letters keep their case: `to_tsvector` folds it)."""
    return _words(" ".join([part or "" for part in parts]))


def _words(text: str | None) -> str:
    if not text:  # most rows' thinking, a tool result message's content
        return ""
    return text[:LIMIT].encode("ascii", _FOLD).translate(_TO_SPACES).decode("utf-8")


@dataclass(frozen=True)
class Vector:
    """A tsvector column and the columns of its table whose text it indexes."""

    column: str
    sources: tuple[str, ...]
    # (column, value): a row whose column holds value indexes nothing here (one source only)
    unless: tuple[str, str] | None = None

    @property
    def staged(self) -> str:
        """The staging column that carries the prepared text."""
        return f"_words_{self.column}"

    def preparer(self, names: Sequence[str]) -> Callable[[Sequence[Any]], str]:
        """A row's prepared text, for rows in `names` order (positions found once: it runs
        for every row of a backfill)."""
        at = [names.index(n) for n in self.sources]
        if self.unless is not None:
            skip, value = names.index(self.unless[0]), self.unless[1]
            (only,) = at
            return lambda row: "" if row[skip] == value else _words(row[only])
        if len(at) == 1:
            (only,) = at
            return lambda row: _words(row[only])
        return lambda row: _words(" ".join([row[i] or "" for i in at]))


# A tool result message holds the output its tool call holds: indexed once, on the call.
VECTORS: dict[str, tuple[Vector, ...]] = {
    "messages": (
        Vector("content_tsv", ("content",), ("message_type", "tool_result")),
        Vector("thinking_tsv", ("thinking",)),
    ),
    "tool_calls": (Vector("search_tsv", ("tool_name", "params", "result", "error")),),
    "sessions": (Vector("search_tsv", ("title", "task_description")),),
}


_STEP = 2000  # rows re-indexed per round trip by `segment_scripts`
_KEYS = {"messages": "message_id", "tool_calls": "tool_call_id", "sessions": "session_id"}


def vectors_again(
    conn: psycopg.Connection[tuple[Any, ...]], table: str, where: str, params: list[Any]
) -> int:
    """The vectors of `table`'s rows matching `where` prepared again from their text, as the
    writer prepares them (a migration changed the text); returns how many rows."""
    vectors, key = VECTORS[table], _KEYS[table]
    texts = sorted({n for v in vectors for n in v.sources})
    names = [key, *texts, *(v.unless[0] for v in vectors if v.unless is not None)]
    preparers = [(v.column, v.preparer(names)) for v in vectors]
    sets = ", ".join(f"{column} = to_tsvector('simple', %s)" for column, _ in preparers)
    changed = 0
    # A server-side cursor, a step of rows at a time: the rows may not fit in memory.
    with conn.cursor(name=f"th_vectors_{table}") as found, conn.cursor() as update:
        found.execute(f"SELECT {', '.join(names)} FROM {table} WHERE {where}", params)
        while rows := found.fetchmany(_STEP):
            update.executemany(
                f"UPDATE {table} SET {sets} WHERE {key} = %s",
                [(*(prepare(row) for _, prepare in preparers), row[0]) for row in rows],
            )
            changed += len(rows)
    return changed


def segment_scripts(conn: psycopg.Connection[tuple[Any, ...]]) -> int:
    """Migration 0015: the rows whose words were prepared before scripts without spaces were
    split into characters get their vectors again. Only rows holding such text change;
    returns how many there were."""
    changed = 0
    unspaced = postgres_class()
    for table, vectors in VECTORS.items():
        texts = sorted({n for v in vectors for n in v.sources})
        where = " OR ".join(f"{n}::text ~ %s" for n in texts)
        changed += vectors_again(conn, table, where, [unspaced] * len(texts))
    return changed
