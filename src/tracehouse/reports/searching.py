"""One search as every front end runs it (the CLI, the gateway, the web view, MCP): the mode
chosen, and the model loaded only when the search needs it.

With no mode asked for, a ledger that holds vectors of the configured model is searched both
ways at once (`hybrid`), any other lexically; a note says why not when the ledger's vectors
are another model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracehouse.search.semantic import usable_model

if TYPE_CHECKING:
    from tracehouse.search.embedders import Lazy
    from tracehouse.search.hits import Hit, SearchFilters
    from tracehouse.store.protocol import SessionStore


@dataclass(frozen=True)
class Answer:
    mode: str  # the mode the hits were found in
    hits: list[Hit]
    note: str | None = None  # why search by meaning was left out of a search that chose


def search(
    store: SessionStore,
    query: str,
    filters: SearchFilters,
    *,
    mode: str | None = None,
    embeddings: Lazy | None = None,
) -> Answer:
    note = None
    if mode is None:
        held = store.embedding_model()
        enabled = embeddings is not None and embeddings.enabled
        mode = "hybrid" if enabled and embeddings and held == embeddings.name else "lexical"
        if enabled and embeddings and held is not None and held != embeddings.name:
            note = usable_model(held, embeddings.name)
    if mode == "lexical":
        return Answer(mode, store.search(query, filters), note)
    embedder = embeddings.model() if embeddings is not None and embeddings.enabled else None
    return Answer(mode, store.search(query, filters, mode=mode, embedder=embedder))
