"""Search by meaning on both stores: the backlog embedded after the rows are committed, kept
true as rows are rewritten and deleted, resumable, made again when the model changes; and the
nearest rows found through the same filters as a lexical hit, fused with it in hybrid mode."""

from __future__ import annotations

import pytest

from tests.search.fake_model import WordsModel
from tests.store.factory import T0, batch, item
from tracehouse.config import WORDLLAMA
from tracehouse.search import embedders
from tracehouse.search.hits import SearchFilters
from tracehouse.search.semantic import SemanticUnavailable
from tracehouse.store.protocol import SessionStore

TOPICS = {
    "s-division": "the ratio helper raised ZeroDivisionError when dividing by zero",
    "s-retry": "we dropped the retry wrapper around the http client",
    "s-fonts": "which monospace fonts render Chinese well in the terminal",
}


def imported(
    store: SessionStore, topics: dict[str, str] = TOPICS, provider: str = "claude-code"
) -> None:
    items = [
        {**item(sid, 2, text=text), "sourceProvider": provider} for sid, text in topics.items()
    ]
    response = store.import_batch(batch(items))
    assert all(r.status != "failed" for r in response.results), response


def semantic(store: SessionStore, model: WordsModel, text: str, **filters: object) -> list:  # type: ignore[type-arg]
    found = store.search(text, SearchFilters(limit=10, **filters), mode="semantic", embedder=model)  # type: ignore[arg-type]
    return found


def sessions_of(hits: list) -> list[str]:  # type: ignore[type-arg]
    out: list[str] = []
    for hit in hits:
        if hit.session_id not in out:
            out.append(hit.session_id)
    return out


def sid_of(store: SessionStore, source_id: str) -> str:
    rows = store.query("SELECT session_id FROM sessions WHERE source_session_id = ?", [source_id])
    return str(rows[0]["session_id"])


def test_the_backlog_is_embedded_and_found_by_meaning(store: SessionStore) -> None:
    imported(store)
    model = WordsModel()
    assert store.embedding_model() is None
    assert store.embedding_backlog() > 0
    with pytest.raises(SemanticUnavailable, match="no vectors yet"):
        semantic(store, model, "zero")
    done = store.embed_backlog(model)
    status = store.embedding_status()
    assert done > 0 and status.backlog == 0 and status.model == "test:words"
    assert store.embedding_backlog() == 0
    hits = semantic(store, model, "dividing zero ratio")
    assert sessions_of(hits)[0] == sid_of(store, "s-division")
    assert all(h.snippet for h in hits)
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_a_text_seen_before_is_not_embedded_again(store: SessionStore) -> None:
    imported(store)
    model = WordsModel()
    store.embed_backlog(model)
    first = model.calls
    again = {f"{sid}-copy": text for sid, text in TOPICS.items()}  # the same texts, new sessions
    imported(store, again)
    store.embed_backlog(model)
    status = store.embedding_status()
    assert model.calls == first + len(again)  # only the new titles: the messages were known
    assert status.passages > status.vectors


def test_filters_apply_to_semantic_hits(store: SessionStore) -> None:
    imported(store)
    imported(store, {"g-division": TOPICS["s-division"]}, provider="gemini-cli")
    model = WordsModel()
    store.embed_backlog(model)
    only = semantic(store, model, "dividing by zero", providers=("gemini-cli",))
    assert only and {h.provider for h in only} == {"gemini-cli"}
    titles = semantic(store, model, "dividing by zero", kinds=("user",))
    assert titles and {h.kind for h in titles} == {"user"}
    one = sid_of(store, "s-retry")
    within = semantic(store, model, "dividing by zero", session_ids=(one,))
    assert {h.session_id for h in within} == {one}


def test_a_rewritten_row_is_embedded_again(store: SessionStore) -> None:
    imported(store)
    model = WordsModel()
    store.embed_backlog(model)
    before = semantic(store, model, "tenacity backoff plain loop")  # a store reads its blocks
    assert all("tenacity" not in h.snippet for h in before)
    imported(store, {"s-retry": "tenacity backoff replaced by a plain loop"})
    assert store.embedding_backlog() > 0
    store.embed_backlog(model)
    hits = semantic(store, model, "tenacity backoff plain loop")
    assert sessions_of(hits)[0] == sid_of(store, "s-retry")
    old = semantic(store, model, "retry wrapper http client")
    assert all(
        "retry wrapper" not in h.snippet for h in old if h.session_id == sid_of(store, "s-retry")
    )


def test_deleted_sessions_take_their_passages(store: SessionStore) -> None:
    imported(store)
    model = WordsModel()
    store.embed_backlog(model)
    gone = sid_of(store, "s-fonts")
    store.delete_sessions([gone], "2026-01-01T00:00:00Z")
    hits = semantic(store, model, "monospace fonts Chinese terminal")
    assert gone not in {h.session_id for h in hits}


def test_embedding_stopped_part_way_resumes(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported(store)
    model = WordsModel()
    calls = {"n": 0}
    real = model.embed

    def failing(texts):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # killed between two steps
        return real(texts)

    monkeypatch.setattr("tracehouse.search.sqlite_vectors.STEP_ROWS", 2)
    monkeypatch.setattr("tracehouse.search.postgres_vectors.STEP_ROWS", 2)
    model.embed = failing  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        store.embed_backlog(model)
    left = store.embedding_backlog()
    assert left > 0
    model.embed = real  # type: ignore[method-assign]
    store.embed_backlog(model)
    assert store.embedding_backlog() == 0
    assert sessions_of(semantic(store, model, "monospace fonts"))[0] == sid_of(store, "s-fonts")


def test_another_model_makes_every_vector_again(store: SessionStore) -> None:
    imported(store)
    first = WordsModel()
    store.embed_backlog(first)
    other = WordsModel()
    other.name = "test:other"
    with pytest.raises(SemanticUnavailable, match="made by test:words"):
        semantic(store, other, "zero")
    store.embed_backlog(other)
    assert store.embedding_model() == "test:other"
    assert store.embedding_status().vectors == store.embedding_status().passages or other.calls


def test_hybrid_fuses_both_rankings(store: SessionStore) -> None:
    imported(store)
    model = WordsModel()
    store.embed_backlog(model)
    lexical = store.search("ZeroDivisionError", SearchFilters(limit=10))
    hybrid = store.search(
        "ZeroDivisionError", SearchFilters(limit=10), mode="hybrid", embedder=model
    )
    assert lexical and hybrid
    assert hybrid[0].session_id == lexical[0].session_id
    assert "\x02" in hybrid[0].snippet  # the lexical snippet, its word marked


def test_no_change_embeds_nothing(store: SessionStore) -> None:
    imported(store)
    model = WordsModel()
    store.embed_backlog(model)
    calls = model.calls
    assert store.embed_backlog(model) == 0 and model.calls == calls
    assert store.embedding_backlog(wrote=False) == 0


def test_compact_leaves_no_vector_of_a_text_no_row_holds(store: SessionStore) -> None:
    imported(store)
    model = WordsModel()
    store.embed_backlog(model)
    before = store.embedding_status().vectors
    store.delete_sessions([sid_of(store, "s-fonts")], "2026-01-01T00:00:00Z")
    imported(store, {"s-retry": "tenacity backoff replaced by a plain loop"})  # rewritten
    store.compact()  # before the rewritten rows are embedded again
    after = store.embedding_status()
    assert after.vectors < before and after.backlog > 0
    old = semantic(store, model, "retry wrapper http client")
    assert all("retry wrapper" not in h.snippet for h in old)  # its old text's vector is gone
    store.embed_backlog(model)
    assert sessions_of(semantic(store, model, "dividing by zero"))[0] == sid_of(store, "s-division")
    assert sessions_of(semantic(store, model, "tenacity backoff"))[0] == sid_of(store, "s-retry")


class Packaged(WordsModel):
    """Stands for the packaged model, whose dimensions are known before it loads."""

    name = WORDLLAMA
    dims = 256


def test_rows_written_again_with_the_texts_they_held_load_no_model(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[object] = []
    monkeypatch.setattr(embedders, "load", lambda spec, **_: loads.append(spec) or Packaged())
    imported(store)
    assert store.embed_backlog(embedders.Lazy("wordllama")) > 0
    assert len(loads) == 1
    # the same session written again, later: its rows queued again, every text known
    again = item("s-retry", 2, text=TOPICS["s-retry"], updatedAtMs=T0 + 60_000)
    again["messages"][0]["meta"] = {"n": "edited"}
    store.import_batch(batch([again]))
    assert store.embedding_backlog() > 0
    assert store.embed_backlog(embedders.Lazy("wordllama")) > 0
    assert len(loads) == 1
    assert store.embedding_backlog() == 0
    imported(store, {"s-retry": "tenacity backoff replaced by a plain loop"})  # a new text
    store.embed_backlog(embedders.Lazy("wordllama"))
    assert len(loads) == 2
