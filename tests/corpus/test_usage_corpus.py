"""`usage` on the real logs: its totals are the independent token rules of the corpus tests,
summed session by session, whatever period they are grouped by."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.corpus.test_claude_corpus import claude_homes
from tests.corpus.test_claude_corpus import expected_tokens as claude_tokens
from tests.corpus.test_codex_corpus import codex_homes
from tests.corpus.test_codex_corpus import expected_tokens as codex_tokens
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.reports.filters import build_session_filters
from tracehouse.reports.pricing import load_prices
from tracehouse.reports.usage import usage
from tracehouse.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def ledger(corpus: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    store = SqliteStore(tmp_path_factory.mktemp("usage") / "ledger.db")
    sources = {"claude-code": claude_homes(corpus), "codex": codex_homes(corpus)}
    report = sync(store, SyncOptions(sources=sources))
    assert report.ok, (report.rejects, report.failures)
    yield store
    store.close()


def test_session_totals_follow_the_independent_rules(ledger) -> None:  # type: ignore[no-untyped-def]
    report = usage(ledger, "session", build_session_filters(), load_prices())
    by_label = {(line.key, line.provider): line.tokens for line in report.lines}
    checked = 0
    for session in ledger.rows("sessions"):
        tokens = by_label.get((session["label"], session["source_provider"]))
        path = session["source_path"]
        if session["source_provider"] == "claude-code":
            expected = claude_tokens(Path(path))
            assert (tokens.total if tokens else 0) == expected, path
        elif session["source_provider"] == "codex" and path.endswith(".jsonl"):
            try:
                inp, out, cached = codex_tokens(path)
            except orjson.JSONDecodeError:  # a torn line the rule's simple reader cannot skip
                continue
            got = (tokens.input, tokens.output, tokens.cache_read) if tokens else (0, 0, 0)
            assert got == (inp, out, cached), path  # Codex's input holds the cached, as ours
        else:
            continue
        checked += bool(tokens)
    assert checked >= 40


def test_every_grouping_has_the_same_total(ledger) -> None:  # type: ignore[no-untyped-def]
    prices = load_prices()
    totals = {
        period: usage(ledger, period, build_session_filters(), prices).total
        for period in ("daily", "weekly", "monthly", "session", "project", "model", "machine")
    }
    first = totals["daily"]
    assert first.tokens.total > 10_000_000
    for period, total in totals.items():
        assert total.tokens == first.tokens, period
        assert total.known_cost == pytest.approx(first.known_cost), period


# Models no price dataset can know: an agent's own alias (Qwen Code's `coder-model`, its free
# OAuth tier), a provider's free model, a local Ollama tag, open-weight models served by whoever
# the user pointed at, a turn whose agent wrote no model name.
UNPRICEABLE = {"mimo-v2.5-pro", "big-pickle", "default", "(unknown)", "coder-model",
               "qwen3.5:latest", "openai/qwen3:32b", "qwen3-235b-a22b",
               "openrouter/qwen3-235b-a22b", "openrouter/qwen/qwen3-235b-a22b"}  # fmt: skip


def test_every_model_of_the_fixtures_is_priced_or_listed_with_its_tokens(
    all_homes_ledger: Path,
) -> None:
    store = SqliteStore(all_homes_ledger, migrate=False)
    try:
        report = usage(store, "model", build_session_filters(), load_prices(), breakdown=True)
    finally:
        store.close()
    models: dict[str, list] = {}  # a model's lines: one per agent that used it
    for line in report.lines:
        if line.model is None:
            models.setdefault(line.key, []).append(line)
    assert len(models) >= 20
    assert set(report.unpriced) <= UNPRICEABLE, sorted(set(report.unpriced) - UNPRICEABLE)
    for name, lines in models.items():
        if name in report.unpriced:
            assert all(line.known_cost is None for line in lines), name
            assert sum(line.unpriced for line in lines) == report.unpriced[name], name
        else:
            assert all(line.known_cost is not None and line.known_cost > 0 for line in lines), name
    assert sum(report.unpriced.values()) == report.total.unpriced
    # a row per model with tokens: no zero-token rows in the breakdown
    assert all(line.tokens.total > 0 for line in report.lines)
