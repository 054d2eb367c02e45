"""The search syntax users know, parsed once and written out for each backend.

    words            every word must appear (AND)
    "a phrase"       these words next to each other, in this order
    -word -"phr"     must not appear (a CLI flag such as --dry-run is a term, not an exclusion)
    a OR b           either; OR joins the terms on both sides of it
    migrat*          a prefix

Text is split into words at every character that is not a letter or a digit, the way both
indexes split what they store (SQLite FTS5 `unicode61`; PostgreSQL `simple` over the words
`words_of` gives, which its writer prepares). So a term with punctuation inside
(`billing/webhooks.py`, `rotate_key`, `--dry-run`) is searched as the phrase of its words: it
matches where those words stand together, and `webhooks` alone finds the path too.

Each backend gets a term in the form its index was split in. PostgreSQL's lexemes are
`words_of`'s. FTS5 is handed the term as typed, in a quoted string, and splits and folds it
with the tokenizer that split the stored text: where `unicode61` and `words_of` part ways (it
keeps й, ё and Greek accents, Hangul syllables and compatibility characters as they are, and
ends a word at a Devanagari or Arabic mark), folding the query first would look for words the
index never holds, and `мой`, `καλημέρα` or `한국어` would find nothing.

Nothing the user types reaches either engine unescaped: FTS5 terms are double-quoted strings,
PostgreSQL lexemes are passed as parameters to `phraseto_tsquery` / `to_tsquery`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from tracehouse.errors import TracehouseError
from tracehouse.search.scripts import segmented

WORD = re.compile(r"[^\W_]+")
_TOKEN = re.compile(r'-?"[^"]*"?|\S+')


class QueryError(TracehouseError):
    """A search that cannot be run: empty, or nothing but exclusions."""


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]  # `words_of` the term; more than one is a phrase
    prefix: bool = False  # the last word is a prefix
    text: str = ""  # the term as typed, without its quotes or `*`


@dataclass(frozen=True)
class Query:
    """All of `groups` must match (each group: any of its terms); none of `excluded` may."""

    groups: tuple[tuple[Term, ...], ...]
    excluded: tuple[Term, ...]
    text: str

    def all_terms(self) -> list[Term]:
        return [t for group in self.groups for t in group]


def words_of(text: str) -> list[str]:
    """How stored text and queries are split into words: the runs of letters and digits of
    the folded text, each character of a script written without spaces a word of its own
    (`search/scripts.py`)."""
    return WORD.findall(segmented(folded(text)))


def folded(text: str) -> str:
    """Case and diacritics folded: lower case, decomposed, combining marks dropped. A final
    sigma is σ, as FTS5 folds it, so that no word's folding depends on what follows it."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("ς", "σ"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def parse(text: str) -> Query:
    groups: list[list[Term]] = []
    excluded: list[Term] = []
    join_next = False
    for token in _TOKEN.findall(text):
        if token == "OR":
            join_next = bool(groups)
            continue
        negative = len(token) > 1 and token[0] == "-" and token[1] != "-"  # --flag is a word
        term = _term(token[1:] if negative else token)
        if term is None:
            continue
        if negative:
            excluded.append(term)
        elif join_next:
            groups[-1].append(term)
        else:
            groups.append([term])
        join_next = False
    if not groups:
        why = "only exclusions" if excluded else "no words"
        raise QueryError(f"search {text!r}: {why}; give at least one word to look for")
    return Query(tuple(tuple(g) for g in groups), tuple(excluded), text)


def _term(token: str) -> Term | None:
    quoted = token.startswith('"')
    body = token.strip('"')
    prefix = not quoted and body.endswith("*")
    typed = body.rstrip("*") if prefix else body
    words = words_of(typed)
    if not words:
        return None
    return Term(tuple(words), prefix, typed)


def _expression(
    query: Query, term: Callable[[Term], str], any_of: str, all_of: str, but_not: str
) -> str:
    """The query's structure in one engine's operators; `but_not` takes {kept} and {dropped}."""
    clauses = []
    for group in query.groups:
        inner = any_of.join(term(t) for t in group)
        clauses.append(f"({inner})" if len(group) > 1 else inner)
    expression = all_of.join(clauses)
    for t in query.excluded:
        expression = but_not.format(kept=expression, dropped=term(t))
    return expression


def to_fts5(query: Query) -> str:
    """The FTS5 MATCH expression: every term a quoted string, so no user text is syntax, and
    as typed, for FTS5 to split and fold as it split and folded the stored text."""

    def term(t: Term) -> str:
        # A NUL would end FTS5's string early; it is no letter, so a space splits alike.
        typed = segmented(t.text or " ".join(t.words)).replace('"', '""').replace("\x00", " ")
        phrase = f'"{typed}"'
        return phrase + "*" if t.prefix else phrase

    return _expression(query, term, " OR ", " AND ", "({kept}) NOT {dropped}")


def to_tsquery_sql(query: Query) -> tuple[str, list[str]]:
    """An SQL expression of type tsquery, with `?` placeholders, and its parameters."""
    params: list[str] = []

    def term(t: Term) -> str:
        if t.prefix:  # words are letters and digits only: safe inside a tsquery string
            params.append(" <-> ".join(t.words) + ":*")
            return "to_tsquery('simple', ?)"
        params.append(" ".join(t.words))
        return "phraseto_tsquery('simple', ?)"

    return _expression(query, term, " || ", " && ", "({kept}) && !!({dropped})"), params


def matches(query: Query, text: str | None) -> bool:
    """The same semantics over plain text: what a brute-force scan would find."""
    words = words_of(text or "")

    def found(t: Term) -> bool:
        n = len(t.words)
        for i in range(len(words) - n + 1):
            head, last = words[i : i + n - 1], words[i + n - 1]
            if list(t.words[:-1]) == head and (
                last.startswith(t.words[-1]) if t.prefix else last == t.words[-1]
            ):
                return True
        return False

    return all(any(found(t) for t in group) for group in query.groups) and not any(
        found(t) for t in query.excluded
    )
