"""Search by meaning and hybrid search, as both stores answer them.

    lexical    the full-text index alone: every word must be there (`search/query.py`)
    semantic   the passages whose vectors are nearest the query's (`search/vectors.py`)
    hybrid     both, fused by reciprocal rank: what either finds, ranked by where each put it

A semantic hit's snippet is the window of its passage nearest the query, so it shows why the
hit came up even where it shares no word with the query; the query's words found in it are
marked as in a lexical snippet. A hybrid hit found by both keeps the lexical snippet.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from tracehouse.errors import TracehouseError
from tracehouse.search.hits import MARK, SNIPPET_WORDS, Hit, SearchFilters, collapse
from tracehouse.search.query import folded, words_of

if TYPE_CHECKING:
    import numpy as np

    from tracehouse.search.embedders import Embedder

T = TypeVar("T")
MODES = ("lexical", "semantic", "hybrid")
# Hits each ranking hands the fusion: a hit ranked past this by one mode still counts if the
# other ranks it well.
FUSED_DEPTH = 50
# Reciprocal rank fusion's constant: 60 in the literature, for long rankings. On the relevance
# set (bench/search_quality.py, WordLlama) 10 ranked better where it matters, the top:
# nDCG@10 of paraphrases 50.9 against 46.1 at 60, cross-lingual 47.1 against 42.9, exact
# words 90.7 either way (5: 50.5, 89.8, 47.1; 20: 50.3, 92.4, 43.8; recall@10 the same).
RRF_K = 10
# A semantic hit's snippet window: the passage's words in windows of this many, half
# overlapping; the nearest window is shown.
_WORD = re.compile(r"\S+")
# Words too common to show why a hit matched: not marked in a semantic hit's snippet.
_COMMON = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "do",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "then",
        "there",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


@dataclass(frozen=True)
class Status:
    """What a ledger holds for search by meaning (`doctor`, `index embeddings`)."""

    model: str | None  # the model whose vectors the ledger holds
    dims: int
    passages: int
    vectors: int  # distinct texts embedded (a text in many rows has one vector)
    backlog: int  # rows not embedded yet

    def to_json(self) -> dict[str, object]:
        return {"model": self.model, "dims": self.dims, "passages": self.passages,
                "vectors": self.vectors, "backlog": self.backlog}  # fmt: skip


class SemanticUnavailable(TracehouseError):
    """Search by meaning asked of a ledger without vectors of the configured model."""


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"expected one of {', '.join(MODES)}")
    return mode


def usable_model(held: str | None, wanted: str | None) -> str | None:
    """Why a ledger whose vectors are `held`'s cannot be searched by meaning with the model
    named `wanted` (None: search by meaning is off), or None when it can."""
    if wanted is None:
        return 'search by meaning is off (embeddings = "none")'
    if held is None:
        return "the ledger has no vectors yet: `tracehouse sync` or `tracehouse index embeddings`"
    if held != wanted:
        return (
            f"the ledger's vectors were made by {held}, the settings name {wanted}:"
            " `tracehouse index embeddings` makes them again"
        )
    return None


def required(held: str | None, embedder: Embedder | None) -> Embedder:
    """`embedder`, when a ledger whose vectors are `held`'s can be searched by meaning with it;
    else `SemanticUnavailable`, saying why."""
    reason = usable_model(held, None if embedder is None else embedder.name)
    if reason is not None or embedder is None:
        raise SemanticUnavailable(reason or "no model")
    return embedder


def why(embedder: Embedder, query: np.ndarray, texts: Sequence[str], query_text: str) -> list[str]:
    """For each text, its window nearest `query`, the query's words in it marked. Every
    window of every text is embedded in one call: an endpoint is asked once per search."""
    size = SNIPPET_WORDS
    spans: list[list[tuple[int, int]]] = []
    for text in texts:
        words = [m.span() for m in _WORD.finditer(text)]
        starts = range(0, max(1, len(words) - size // 2), size // 2) if words else []
        spans.append([(words[s][0], words[min(s + size, len(words)) - 1][1]) for s in starts])
    asked = [text[a:b] for text, windows in zip(texts, spans, strict=True) for a, b in windows
             if len(windows) > 1]  # fmt: skip
    scores = iter(embedder.embed(asked) @ query if asked else [])
    wanted = set(words_of(query_text)) - _COMMON
    out = []
    for text, windows in zip(texts, spans, strict=True):
        if not windows:
            out.append("")
            continue
        best = 0
        if len(windows) > 1:
            best = max(range(len(windows)), key=[next(scores) for _ in windows].__getitem__)
        begin, end = windows[best]
        marked = _marked(text[begin:end], wanted)
        out.append(f"{'…' if begin > 0 else ''}{marked}{'…' if end < len(text) else ''}")
    return out


def _marked(window: str, wanted: set[str]) -> str:
    if not wanted:
        return window

    def mark(found: re.Match[str]) -> str:
        word = found.group(0)
        return f"{MARK[0]}{word}{MARK[1]}" if folded(word) in wanted else word

    return re.sub(r"[^\W_]+", mark, window)


def ranked(hits: Sequence[Hit], limit: int) -> list[Hit]:
    """Hits best first (ties: newest, then kind and id), repeats collapsed."""
    return collapse(_ordered(hits, lambda h: h))[:limit]


def _ordered(items: Sequence[T], hit_of: Callable[[T], Hit]) -> list[T]:
    """As `merge` orders hits: score, the newest, then kind and id (stable sorts, last first)."""
    out = sorted(items, key=lambda i: (hit_of(i).kind, hit_of(i).id))
    out.sort(key=lambda i: hit_of(i).created_at or "", reverse=True)
    out.sort(key=lambda i: hit_of(i).score, reverse=True)
    return out


# A hit found by meaning: the passage it was found by (source, row, part) and its text key.
Found = tuple[Hit, tuple[str, int | str, int], int]
FIRST_KEYS = 32


def answer(
    embedder: Embedder,
    text: str,
    filters: SearchFilters,
    nearest: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    hits_for: Callable[[dict[int, float], SearchFilters], list[Found]],
    passage_text: Callable[[tuple[str, int | str, int]], str],
    lexical: Callable[[SearchFilters], list[Hit]] | None = None,
) -> list[Hit]:
    """A search by meaning (with `lexical`: hybrid) as a store answers it, through the store's
    own `nearest` scan, `hits_for` rows and `passage_text`. Snippets are cut last, for the hits
    returned alone: a hybrid search's deeper rankings cost no snippet they do not show."""
    query = embedder.embed([text])[0]
    keys, scores = nearest(query)
    deep = replace(filters, limit=max(filters.limit, FUSED_DEPTH)) if lexical else filters
    found = best_hits(keys, scores, deep.limit, lambda score_of: hits_for(score_of, deep))
    hits = [hit for hit, _ in found]
    if lexical is not None:
        hits = fuse(lexical(deep), hits, filters.limit)
    at = {(hit.kind, hit.id): passage for hit, passage in found}
    bare = [hit for hit in hits if not hit.snippet]
    cuts = iter(why(embedder, query, [passage_text(at[(h.kind, h.id)]) for h in bare], text))
    return [hit if hit.snippet else replace(hit, snippet=next(cuts)) for hit in hits]


def best_hits(
    keys: np.ndarray,
    scores: np.ndarray,
    limit: int,
    hits_for: Callable[[dict[int, float]], list[Found]],
) -> list[tuple[Hit, tuple[str, int | str, int]]]:
    """The best `limit` hits of the text keys `keys` (best first, scored `scores`), as
    `hits_for` finds the rows that pass the filters for some of them: the first keys, then four
    times as many after them while fewer than `limit` hits are found. Every key not tried scores
    below every key tried, so the hits found are the best ones. A text in many rows of a session
    (a prompt sent again) is one hit, its repeats counted."""
    groups: dict[tuple[object, ...], _Group] = {}
    start, take = 0, FIRST_KEYS
    while start < len(keys) and len(groups) < limit:
        part = slice(start, start + take)
        found = hits_for(dict(zip(keys[part].tolist(), scores[part].tolist(), strict=True)))
        for hit, passage, key in _ordered(found, lambda f: f[0]):
            group = (hit.session_id, hit.kind, hit.tool_name, key)
            held = groups.get(group)
            if held is None:
                groups[group] = _Group(hit, passage)
            else:
                held.repeats += 1
        start, take = start + take, take * 4
    best = _ordered(list(groups.values()), lambda g: g.hit)[:limit]
    return [
        (replace(g.hit, repeats=g.repeats) if g.repeats > 1 else g.hit, g.passage) for g in best
    ]


@dataclass
class _Group:
    """The first hit of a text in a session, and how many rows of it the session holds."""

    hit: Hit
    passage: tuple[str, int | str, int]
    repeats: int = 1


def best_rows(
    places: Sequence[tuple[str, int | str, int, int]], score_of: dict[int, float]
) -> dict[str, dict[int | str, tuple[float, int, int]]]:
    """Per source, each row's best passage among `places` (source, row, part, text key): its
    score, part and text key."""
    best: dict[str, dict[int | str, tuple[float, int, int]]] = {}
    for source, rid, part, key in places:
        score = score_of[key]
        held = best.setdefault(source, {}).get(rid)
        if held is None or score > held[0]:
            best[source][rid] = (score, part, key)
    return best


def fuse(lexical: Sequence[Hit], semantic: Sequence[Hit], limit: int) -> list[Hit]:
    """Reciprocal rank fusion of the two rankings; a hit's score is its fused score."""
    by_place: dict[tuple[str, str], Hit] = {}
    for hit in (*semantic, *lexical):  # a lexical hit's snippet marks what matched: it wins
        by_place[(hit.kind, hit.id)] = hit
    rankings = [[(h.kind, h.id) for h in lexical], [(h.kind, h.id) for h in semantic]]
    fused: dict[tuple[str, str], float] = {}
    for ranking in rankings:
        for rank, place in enumerate(ranking, start=1):
            fused[place] = fused.get(place, 0.0) + 1.0 / (RRF_K + rank)
    hits = [replace(by_place[p], score=round(s, 6)) for p, s in fused.items()]
    return ranked(hits, limit)
