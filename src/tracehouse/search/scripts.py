"""Scripts written without spaces between words, searched by substring.

Chinese, Japanese, Thai, Lao, Khmer and Myanmar text runs its words together: `聊天记录导出` is
one run of letters, so an index that splits text at what is not a letter or a digit (FTS5's
`unicode61`, PostgreSQL's words from `words_of`) holds the whole run as one word, and a search
for `聊天记录` — a word inside it — finds nothing. A dictionary segmenter would need a dictionary
per language and still miss names and new words. Instead each character of these scripts is
indexed as a word of its own (with the combining marks that belong to it), and a query in them
becomes the phrase of its characters: the characters standing together, in order — a substring
search inside the run, ranked by BM25 like every other phrase, at about one index entry per
character. Text in every other script is indexed and searched as before.

Both sides go through `segmented`: the indexes (SQLite through the `th_segmented` SQL function
its connections register, PostgreSQL through the writer's prepared words) and the query.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Blocks whose letters are written without spaces between words. Han: the unified ideographs,
# extension A, compatibility ideographs and the supplementary-plane extensions.
_HAN = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x323AF))
_OTHERS = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0xFF66, 0xFF9F),  # half-width Katakana
)
SQL_FUNCTION = "th_segmented"


def _ranges(pairs: list[tuple[int, int]]) -> str:
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in pairs)


@lru_cache(maxsize=1)
def _classes() -> tuple[str, str]:
    """(letters, marks) of the unspaced scripts as regular-expression class bodies. The
    non-Han blocks are classified character by character (a few hundred): their vowel signs
    and tone marks must stay with the letter before them."""
    letters: list[tuple[int, int]] = list(_HAN)
    marks: list[tuple[int, int]] = []
    for start, end in _OTHERS:
        for code in range(start, end + 1):
            category = unicodedata.category(chr(code))
            if category[0] == "M":
                marks.append((code, code))
            elif category[0] in "LN":
                letters.append((code, code))
    return _ranges(letters), _ranges(marks)


@lru_cache(maxsize=1)
def _unit() -> re.Pattern[str]:
    """One character of an unspaced script with its marks, as a group: `split` keeps it."""
    letters, marks = _classes()
    return re.compile(f"([{letters}][{marks}]*)")


@lru_cache(maxsize=1)
def _any() -> re.Pattern[str]:
    return re.compile(f"[{_classes()[0]}]")


@lru_cache(maxsize=1)
def words() -> re.Pattern[str]:
    """The words of raw text as search counts them: each character of an unspaced script one
    word (with its marks), any other run of letters and digits one."""
    letters, marks = _classes()
    return re.compile(f"[{letters}][{marks}]*|(?:(?![{letters}])[^\\W_])+")


def segmented(text: str) -> str:
    """`text` with each character of an unspaced script standing apart as a word of its own;
    any other text as it is (the same object, where there is none: most text is ASCII)."""
    if text.isascii() or _any().search(text) is None:
        return text
    # `split` gives the text around each character and the character in turn, always starting
    # and ending with the text around (empty where there is none), so joining with spaces puts
    # one on each side of every character: `sub` with " \g<0> " in C, at half the time of
    # `sub` calling back into Python for each character (the writer's share of a backfill
    # spent 1.5 s here on the bench corpus).
    return " ".join(_unit().split(text))


def sql_segmented(text: str | bytes | int | float | None) -> str | bytes | int | float | None:
    """`segmented` as an SQL function: NULL and non-text values pass through."""
    return segmented(text) if isinstance(text, str) else text


def has_unspaced(text: str | None) -> bool:
    return text is not None and not text.isascii() and _any().search(text) is not None


def is_unspaced(word: str) -> bool:
    """Whether `word` (one of `words_of`) is a character of an unspaced script."""
    return _unit().fullmatch(word) is not None


def postgres_class() -> str:
    """The blocks of the unspaced scripts as a PostgreSQL regular-expression bracket."""
    return "[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in (*_HAN, *_OTHERS)) + "]"
