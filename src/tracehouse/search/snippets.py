"""Snippets cut in Python, where that is cheap and certain.

FTS5's `snippet()` tokenizes the whole column to choose its fragment: for a hit in a 70 KB tool
output that is milliseconds per hit, and most of a common word's search time. A regular
expression over the raw text finds the first place a term stands in a few microseconds, as its
folded words or as typed. It folds case but not diacritics, so when it finds no term (the hit
matched through folding) the caller asks FTS5 after all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from tracehouse.search.hits import MARK
from tracehouse.search.query import Query, Term

_BETWEEN = r"[\W_]+"  # what separates the words of a phrase: anything not a letter or digit
_BEFORE = r"(?<![^\W_])"  # no letter or digit just before
_AFTER = r"(?![^\W_])"
_WORD = re.compile(r"[^\W_]+")
CONTEXT_CHARS = 400  # looked at either side of the match for its surrounding words


def _pattern(term: Term) -> str:
    """The term's words in the raw text: folded, or as typed (a folded word such as `мои`
    is not in the text where `мой` is)."""
    last = r"[^\W_]*" if term.prefix else _AFTER
    forms = dict.fromkeys([tuple(term.words), tuple(_WORD.findall(term.text))])
    return "|".join(
        _BEFORE + _BETWEEN.join(re.escape(w) for w in words) + last for words in forms if words
    )


@lru_cache(maxsize=64)
def _terms(query: Query) -> re.Pattern[str]:
    return re.compile("|".join(_pattern(t) for t in query.all_terms()), re.IGNORECASE)


def first_snippet(texts: Iterable[str | None], query: Query, words: int) -> str | None:
    """The snippet of the first of `texts` (a hit's columns, in order of preference) in which
    a term is found this way; None when none has one."""
    for text in texts:
        cut = snippet(text, query, words)
        if cut is not None:
            return cut
    return None


def snippet(text: str | None, query: Query, words: int) -> str | None:
    """About `words` words around the first term of `query` found in `text`, every term in them
    marked; None when no term is found this way."""
    if not text:
        return None
    terms = _terms(query)
    found = terms.search(text)
    if found is None:
        return None
    start, end = found.span()
    low = max(0, start - CONTEXT_CHARS)
    before = [m.start() for m in _WORD.finditer(text, low, start)]
    after = [m.end() for m in _WORD.finditer(text, end, end + CONTEXT_CHARS)]
    if low > 0 and before:  # the first and last words found may be parts of longer ones
        before = before[1:]
    if end + CONTEXT_CHARS < len(text) and after:
        after = after[:-1]
    left = min(len(before), max(words // 3, words - 1 - len(after)))
    right = min(len(after), words - 1 - left)
    window_start = before[len(before) - left] if left else start
    window_end = after[right - 1] if right > 0 else end
    window = text[window_start:window_end]
    marked = terms.sub(lambda m: f"{MARK[0]}{m.group(0)}{MARK[1]}", window)
    lead = "…" if window_start > 0 else ""
    trail = "…" if window_end < len(text) else ""
    return f"{lead}{marked}{trail}"
