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
from typing import TYPE_CHECKING

from tracehouse.errors import TracehouseError
from tracehouse.search.hits import MARK, SNIPPET_WORDS, Hit, collapse
from tracehouse.search.query import folded, words_of

if TYPE_CHECKING:
    import numpy as np

    from tracehouse.search.embedders import Embedder

MODES = ("lexical", "semantic", "hybrid")
# Hits each ranking hands the fusion: a hit ranked past this by one mode still counts if the
# other ranks it well.
FUSED_DEPTH = 50
RRF_K = 60
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


def why(embedder: Embedder, query: np.ndarray, text: str, query_text: str) -> str:
    """The window of `text` nearest `query`, the query's words in it marked."""
    words = [m.span() for m in _WORD.finditer(text)]
    if not words:
        return ""
    size = SNIPPET_WORDS
    starts = list(range(0, max(1, len(words) - size // 2), size // 2)) or [0]
    windows = [(words[s][0], words[min(s + size, len(words)) - 1][1]) for s in starts]
    best = 0
    if len(windows) > 1:
        scores = embedder.embed([text[a:b] for a, b in windows]) @ query
        best = int(scores.argmax())
    begin, end = windows[best]
    marked = _marked(text[begin:end], set(words_of(query_text)) - _COMMON)
    return f"{'…' if begin > 0 else ''}{marked}{'…' if end < len(text) else ''}"


def _marked(window: str, wanted: set[str]) -> str:
    if not wanted:
        return window

    def mark(found: re.Match[str]) -> str:
        word = found.group(0)
        return f"{MARK[0]}{word}{MARK[1]}" if folded(word) in wanted else word

    return re.sub(r"[^\W_]+", mark, window)


def ranked(hits: Sequence[Hit], limit: int) -> list[Hit]:
    """Semantic hits best first (ties: newest, then kind and id), repeats collapsed."""
    out = sorted(hits, key=lambda h: (h.kind, h.id))
    out.sort(key=lambda h: h.created_at or "", reverse=True)
    out.sort(key=lambda h: h.score, reverse=True)
    return collapse(out)[:limit]


# A hit and the passage it was found by: (source, row, part).
Found = tuple[Hit, tuple[str, int | str, int]]
FIRST_CANDIDATES = 200


def best_hits(
    keys: np.ndarray,
    scores: np.ndarray,
    limit: int,
    hits_for: Callable[[dict[int, float]], list[Found]],
) -> list[Found]:
    """The best `limit` hits of the text keys `keys` (best first, scored `scores`), as
    `hits_for` finds the rows that pass the filters for some of them. The first candidates are
    tried, then eight times as many after them while fewer than `limit` hits are found: every
    key not tried scores below every key tried, so the hits found are the best ones."""
    found: list[Found] = []
    start, take = 0, max(limit * 10, FIRST_CANDIDATES)
    while start < len(keys):
        part = slice(start, start + take)
        found.extend(hits_for(dict(zip(keys[part].tolist(), scores[part].tolist(), strict=True))))
        if len(ranked([h for h, _ in found], limit)) >= limit:
            break
        start, take = start + take, take * 8
    by_place = {(h.kind, h.id): passage for h, passage in found}
    return [(h, by_place[(h.kind, h.id)]) for h in ranked([h for h, _ in found], limit)]


def best_rows(
    places: Sequence[tuple[str, int | str, int, int]], score_of: dict[int, float]
) -> dict[str, dict[int | str, tuple[float, int]]]:
    """Per source, each row's best passage among `places` (source, row, part, text key): its
    score and part."""
    best: dict[str, dict[int | str, tuple[float, int]]] = {}
    for source, rid, part, key in places:
        score = score_of[key]
        held = best.setdefault(source, {}).get(rid)
        if held is None or score > held[0]:
            best[source][rid] = (score, part)
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
