"""A model for tests: each word a fixed random direction, a text the sum of its words'. Texts
that share words are near; it loads in no time and needs nothing from outside."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xxhash

from tracehouse.search.query import words_of


class WordsModel:
    name = "test:words"
    dims = 64

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}
        self.calls = 0  # texts embedded, over every call

    def _word(self, word: str) -> np.ndarray:
        found = self._cache.get(word)
        if found is None:
            rng = np.random.default_rng(xxhash.xxh64_intdigest(word.encode()))
            found = self._cache[word] = rng.standard_normal(self.dims).astype(np.float32)
        return found

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += len(texts)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in zip(out, texts, strict=True):
            for word in words_of(text):
                row += self._word(word)
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out / norms
