"""The parts of search by meaning that need no ledger: what is embedded of a row, the vectors'
blocks and their scan, the fusion of two rankings, the snippet that says why a hit matched."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.search.fake_model import WordsModel
from tracehouse.search import passages, semantic, vectors
from tracehouse.search.hits import MARK, Hit


def test_a_long_text_is_cut_at_whitespace_into_a_few_parts() -> None:
    text = " ".join(f"word{n}" for n in range(5000))
    cut = passages.parts(text)
    assert len(cut) == passages.MAX_PARTS
    assert all(len(p) <= passages.PART_CHARS for p in cut)
    assert all(not p.startswith(" ") and " word" not in p[:1] for p in cut)
    assert " ".join(cut) == text[: len(" ".join(cut))]  # nothing lost inside what is kept


@given(st.text(max_size=4000))
@settings(max_examples=200, deadline=None)
def test_parts_keep_the_words_in_order(text: str) -> None:
    cut = passages.parts(text)
    flat = " ".join(text.split())
    assert " ".join(cut) == flat[: len(" ".join(cut))]
    assert all(p.strip() == p and p for p in cut)


def test_a_tool_result_is_embedded_on_its_call_and_a_call_as_its_line() -> None:
    assert passages.of_message(1, "tool_result", "output", None) == []
    thinking = passages.of_message(2, "assistant", None, "let me think")
    assert [(p.source, p.text) for p in thinking] == [("thinking", "let me think")]
    (call,) = passages.of_tool_call(3, "Bash", '{"command": "pytest -x", "timeout": 5}')
    assert call.text == "Bash command: pytest -x timeout: 5"


def test_text_keys_are_signed_64_bit_and_stable() -> None:
    keys = [passages.text_key(t) for t in ("a", "b", "\ud800 lone surrogate", "")]
    assert all(-(1 << 63) <= k < (1 << 63) for k in keys)
    assert passages.text_key("a") == passages.text_key("a") != passages.text_key("b")


def test_blocks_fill_up_before_new_ones_start() -> None:
    dims = 4
    rng = np.random.default_rng(1)

    def block(n: int, start: int) -> vectors.Block:
        raw = rng.standard_normal((n, dims)).astype(np.float32)
        raw /= np.linalg.norm(raw, axis=1, keepdims=True)
        return vectors.Block.of(np.arange(start, start + n), raw)

    held = block(vectors.BLOCK - 3, 0)
    merged, fresh = vectors.placed(held, block(vectors.BLOCK + 10, 10**6), dims)
    assert merged is not None and merged.count == vectors.BLOCK
    assert [b.count for b in fresh] == [vectors.BLOCK, 7]
    kept = merged.key_list() + [k for b in fresh for k in b.key_list()]
    assert len(kept) == len(set(kept)) == 2 * vectors.BLOCK + 7
    full, fresh = vectors.placed(merged, block(2, 5), dims)
    assert full is None and [b.count for b in fresh] == [2]


@given(st.integers(2, 300), st.integers(0, 2**32 - 1))
@settings(max_examples=50, deadline=None)
def test_the_scan_ranks_as_the_exact_cosine_within_quantisation(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    raw = rng.standard_normal((n, 32)).astype(np.float32)
    raw /= np.linalg.norm(raw, axis=1, keepdims=True)
    query = raw[0]
    block = vectors.Block.of(np.arange(n), raw)
    keys, scores = vectors.nearest(query, [(block.keys, block.vectors)], 32)
    exact = raw @ query
    assert sorted(keys.tolist()) == list(range(n))
    assert np.all(np.diff(scores) <= 0)
    assert np.max(np.abs(scores - exact[keys])) < 0.02
    assert keys[0] == 0 or exact[keys[0]] > 1 - 0.02


def _hit(kind: str, hid: str, snippet: str = "") -> Hit:
    return Hit(kind, hid, None, "s", "cc-1", "claude-code", None, "2026-01-01T00:00:00Z",
               snippet, 1.0)  # fmt: skip


def test_fusion_ranks_what_both_found_first_with_the_lexical_snippet() -> None:
    both = _hit("user", "m1", f"a {MARK[0]}word{MARK[1]}")
    lexical = [_hit("user", "m2"), both]
    semantic_hits = [_hit("assistant", "m3"), _hit("user", "m1", "a meaning")]
    fused = semantic.fuse(lexical, semantic_hits, 10)
    assert fused[0].id == "m1" and fused[0].snippet == both.snippet
    assert {h.id for h in fused} == {"m1", "m2", "m3"}
    assert fused == sorted(fused, key=lambda h: -h.score)


def test_the_snippet_is_the_window_nearest_the_query_with_its_words_marked() -> None:
    model = WordsModel()
    text = " ".join(["filler text about nothing in particular"] * 10)
    text += " the ratio helper divides by zero here " + " ".join(["more filler words"] * 10)
    query = model.embed(["ratio divides zero"])[0]
    (cut,) = semantic.why(model, query, [text], "the ratio divides zero")
    assert f"{MARK[0]}ratio{MARK[1]}" in cut and f"{MARK[0]}zero{MARK[1]}" in cut
    assert f"{MARK[0]}the{MARK[1]}" not in cut  # too common to say why
    assert cut.startswith("…") and cut.endswith("…")


def test_a_ledger_of_another_model_is_refused_by_name() -> None:
    assert semantic.usable_model("test:words", "test:words") is None
    assert "made by openai:x@http://h" in (semantic.usable_model("openai:x@http://h", "w") or "")
    assert "off" in (semantic.usable_model("w", None) or "")
