"""Snippets cut in Python, where that is cheap and certain.

FTS5's `snippet()` tokenizes the whole column to choose its fragment: for a hit in a 70 KB tool
output that is milliseconds per hit, and most of a common word's search time. A regular
expression over the raw text finds the first place a term stands in a few microseconds, as its
folded words or as typed, and, for a caller whose engine cannot mark a hit found through
folding, in any spelling that folds to its words (`café` for `cafe`). Where it finds none, the
caller asks the engine after all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

import orjson

from tracehouse.search import scripts
from tracehouse.search.hits import MARK
from tracehouse.search.query import Query, Term, folded
from tracehouse.search.scripts import is_unspaced

_BETWEEN = r"[\W_]+"  # what separates the words of a phrase: anything not a letter or digit
_BEFORE = r"(?<![^\W_])"  # no letter or digit just before
_AFTER = r"(?![^\W_])"
_WORD = re.compile(r"[^\W_]+")
CONTEXT_CHARS = 400  # looked at either side of the match for its surrounding words
SPELLED_CHARS = 200_000  # as far as a spelling is looked for (PostgreSQL's index reaches as far)


def _pattern(term: Term) -> str:
    """The term's words in the raw text, folded or as typed (`мой`, where the folded word is
    `мои`)."""
    forms = dict.fromkeys([tuple(term.words), tuple(_WORD.findall(term.text))])
    return "|".join(_phrase(words, map(re.escape, words), term.prefix) for words in forms if words)


def _spelled(term: Term) -> str:
    """The term's words in any spelling that folds to them (`café` for `cafe`): each letter a
    class of the characters that fold to it. Three times slower to scan with than `_pattern`:
    only where `_pattern` found nothing."""
    spelled = ("".join(map(_spellings, w)) for w in term.words)
    return _phrase(term.words, spelled, term.prefix)


def _phrase(words: Sequence[str], patterns: Iterable[str], prefix: bool) -> str:
    """The words' patterns as a phrase in raw text. A character of a script written without
    spaces is a word with no boundary of its own (`记录` inside `聊天记录导出`), and the
    characters of such a run follow one another with nothing between them."""
    out = []
    for i, (word, pattern) in enumerate(zip(words, patterns, strict=True)):
        unspaced = is_unspaced(word)
        if i == 0:
            out.append(pattern if unspaced else _BEFORE + pattern)
        else:
            between = r"[\W_]*" if unspaced or is_unspaced(words[i - 1]) else _BETWEEN
            out.append(between + pattern)
    if not is_unspaced(words[-1]):
        out.append(r"[^\W_]*" if prefix else _AFTER)
    return "".join(out)


def _spellings(folded: str) -> str:
    """A pattern for one folded character: every character that folds to it alone, each
    perhaps followed by combining marks (text written decomposed)."""
    variants = _folds_to().get(folded)
    if variants is None:
        return re.escape(folded)
    return f"[{re.escape(folded + variants)}]{_MARKS}*"


_MARKS = "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]"
# Where the letters and digits with accents, marks or compatibility forms are: Latin-1 to Latin
# Extended-B, Greek, Cyrillic, Latin Extended Additional, Greek Extended, super- and subscripts
# to enclosed alphanumerics, full-width forms. A spelling outside them is left to the engine.
_FOLDED_BLOCKS = (
    (0x00C0, 0x024F), (0x0370, 0x04FF), (0x1E00, 0x1FFF), (0x2070, 0x24FF), (0xFF00, 0xFFEF),
)  # fmt: skip


@lru_cache(maxsize=1)
def _folds_to() -> dict[str, str]:
    """Folded character → the characters of `_FOLDED_BLOCKS` that fold to it alone (as
    `words_of` folds: lower case, NFKD, combining marks dropped)."""
    found: dict[str, list[str]] = {}
    for start, end in _FOLDED_BLOCKS:
        for char in map(chr, range(start, end + 1)):
            one = folded(char)
            if len(one) == 1 and one != char:
                found.setdefault(one, []).append(char)
    return {k: "".join(v) for k, v in found.items()}


@lru_cache(maxsize=64)
def _terms(query: Query, spelled: bool = False) -> re.Pattern[str]:
    form = _spelled if spelled else _pattern
    return re.compile("|".join(form(t) for t in query.all_terms()), re.IGNORECASE)


def first_snippet(
    texts: Iterable[str | None], query: Query, words: int, *, spelled: bool = False
) -> str | None:
    """The snippet of the first of `texts` (a hit's columns, in order of preference) in which
    a term is found this way; None when none has one. `spelled`: where no term is found as
    folded or typed, look for any spelling that folds to it, as an engine that cannot mark such
    a hit itself needs (PostgreSQL's `ts_headline` sees `café`, not `cafe`)."""
    texts = [readable(t) for t in texts]
    for text in texts:
        cut = snippet(text, query, words)
        if cut is not None:
            return cut
    if spelled:
        for text in texts:
            cut = snippet(text, query, words, spelled=True)
            if cut is not None:
                return cut
    return None


def readable(text: str | None) -> str | None:
    """A JSON text (a tool call's parameters, a structured result) as its keys and values, so
    that its snippet reads `command: echo "hi"` rather than escaped JSON; any other text as it
    is. The words are the same either way: what matched still matches."""
    if not text or text[:1] not in "{[":
        return text
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    parts: list[str] = []
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        key, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((str(k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((key, v) for v in reversed(node))
        elif node is not None:
            shown = node if isinstance(node, str) else orjson.dumps(node).decode()
            parts.append(f"{key}: {shown}" if key else shown)
    return " ".join(parts)


def snippet(text: str | None, query: Query, words: int, *, spelled: bool = False) -> str | None:
    """About `words` words around the first term of `query` found in `text`, every term in them
    marked; None when no term is found this way. `spelled`: in any spelling that folds to the
    term, within the first SPELLED_CHARS of a text that is not ASCII (where there is one)."""
    if not text or (spelled and text.isascii()):
        return None
    terms = _terms(query, spelled)
    found = terms.search(text, 0, SPELLED_CHARS if spelled else len(text))
    if found is None:
        return None
    start, end = found.span()
    low = max(0, start - CONTEXT_CHARS)
    each_word = scripts.words()
    before = [m.start() for m in each_word.finditer(text, low, start)]
    after = [m.end() for m in each_word.finditer(text, end, end + CONTEXT_CHARS)]
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
