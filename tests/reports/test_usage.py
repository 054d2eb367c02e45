"""`usage` over a hand-made ledger on both backends: buckets, the token convention, prices
known and unknown, breakdowns and the shared filters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.store.factory import batch, item
from tracehouse.errors import ConfigError
from tracehouse.model.tokens import Tokens
from tracehouse.model.wire import ms_from_iso as ms
from tracehouse.reports.filters import build_session_filters, list_sessions
from tracehouse.reports.pricing import load_prices
from tracehouse.reports.usage import usage

PRICES = load_prices()


def turn(n: int, at: str, model: str | None, inp: int, out: int, cached: int = 0,
         write: int = 0) -> dict[str, Any]:  # fmt: skip
    """A turn in the ledger's convention: `inp` holds `cached` and `write`."""
    return {
        "sourceTurnId": f"t{n}", "sequence": n, "status": "completed", "startedAtMs": ms(at),
        "model": model, "inputTokens": inp, "outputTokens": out, "cachedInputTokens": cached,
        "cacheWriteTokens": write, "totalTokens": inp + out,
    }  # fmt: skip


@pytest.fixture
def ledger(store):  # type: ignore[no-untyped-def]
    claude = item("c1", 2, model="claude-sonnet-4-5-20250929", project="api")
    claude["turns"] = [
        turn(
            0, "2026-01-31T23:30:00.000Z", "claude-sonnet-4-5-20250929", 12_100, 1000, 10_000, 2000
        ),
        turn(1, "2026-02-01T00:30:00.000Z", "claude-opus-4-7", 10, 100, 0, 0),
    ]
    codex = item("x1", 2, model="gpt-5.4", project="web")
    codex["sourceProvider"] = "codex"
    # 5,000 in, of which 4,000 cached
    codex["turns"] = [turn(0, "2026-02-02T10:00:00.000Z", "gpt-5.4", 5000, 300, 4000)]
    mystery = item("m1", 2, model="mimo-v2.5-pro", project="api")
    mystery["turns"] = [turn(0, "2026-02-03T10:00:00.000Z", "mimo-v2.5-pro", 7, 3)]
    child = item("k1", 2, model="claude-haiku-4-5", project="api", isSubagent=True,
                 parentSourceSessionId="c1")  # fmt: skip
    child["turns"] = [turn(0, "2026-02-03T11:00:00.000Z", None, 1, 1)]
    store.import_batch(batch([claude, codex, mystery, child]))
    return store


def test_monthly_in_utc_adds_up_per_provider(ledger) -> None:  # type: ignore[no-untyped-def]
    report = usage(ledger, "monthly", build_session_filters(utc=True), PRICES, utc=True)
    rows = {(r.key, r.provider): r for r in report.lines}
    assert set(rows) == {
        ("2026-01", "claude-code"),
        ("2026-02", "claude-code"),
        ("2026-02", "codex"),
    }
    assert rows["2026-01", "claude-code"].tokens == Tokens(12_100, 1000, 10_000, 2000)
    cost = (100 * 3 + 1000 * 15 + 10_000 * 0.3 + 2000 * 3.75) / 1e6
    assert rows["2026-01", "claude-code"].known_cost == pytest.approx(cost)
    # the price's input rate applies to the input no cache served, on every provider
    assert rows["2026-02", "codex"].tokens == Tokens(5000, 300, 4000, 0)
    assert rows["2026-02", "codex"].known_cost == pytest.approx(
        (1000 * 2.5 + 4000 * 0.25 + 300 * 15) / 1e6
    )
    # an unpriced model leaves its tokens out of the cost and says so; the child's turn has no
    # model of its own and takes its session's
    february = rows["2026-02", "claude-code"]
    assert february.unpriced == 10
    assert february.known_cost == pytest.approx((10 * 5 + 100 * 25 + 2 * 1 + 0) / 1e6 + 1 * 4 / 1e6)
    assert report.total.tokens.total == sum(r.tokens.total for r in report.lines)


def test_a_model_with_no_price_has_no_cost(ledger) -> None:  # type: ignore[no-untyped-def]
    report = usage(ledger, "model", build_session_filters(), PRICES)
    by_model = {r.key: r for r in report.lines}
    assert by_model["mimo-v2.5-pro"].known_cost is None
    assert by_model["gpt-5.4"].known_cost is not None
    assert report.to_json()["total"]["unpricedTokens"] == 10


def test_breakdown_and_filters(ledger) -> None:  # type: ignore[no-untyped-def]
    filters = build_session_filters(since="2026-02-01T00:00:00Z", models=["claude-"], utc=True)
    report = usage(ledger, "daily", filters, PRICES, breakdown=True, utc=True)
    keys = [(r.key, r.model) for r in report.lines]
    # the January turn is outside the window; the model filter is on the turn's own model
    assert keys == [
        ("2026-02-01", None), ("2026-02-01", "claude-opus-4-7"),
        ("2026-02-03", None), ("2026-02-03", "claude-haiku-4-5"),
    ]  # fmt: skip
    no_children = build_session_filters(subagents=False, providers=["claude-code"])
    found = list_sessions(ledger, no_children)
    assert len(found) == 2 and not any(s["is_subagent"] for s in found)
    api = list_sessions(ledger, build_session_filters(project="ap"))
    assert {s["project"] for s in api} == {"api"} and len(api) == 3


def test_labels_bring_their_subagents(ledger) -> None:  # type: ignore[no-untyped-def]
    (parent,) = ledger.query("SELECT label FROM sessions WHERE source_session_id = 'c1'")
    filters = build_session_filters(labels=[parent["label"]], store=ledger)
    assert {s["project"] for s in list_sessions(ledger, filters)} == {"api"}
    assert len(list_sessions(ledger, filters)) == 2


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[models."x"]\ninput = "cheap"\noutput = 1', "models.x.input"),
        ('[models."x"]\ninput = nan\noutput = 1', "models.x.input"),
        ('[models."x"]\ninput = 1', "models.x.output"),
        ('[models."x"]\ninput = 1\noutput = 1\nspeed = 2', "models.x.speed"),
        ("[models\n", "not valid TOML"),
    ],
)
def test_a_bad_price_file_names_the_key(tmp_path: Path, text: str, named: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=named) as caught:
        load_prices(path)
    assert str(path) in str(caught.value)


def test_a_user_price_overrides_the_dataset(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text('[meta]\ndate = "2027-01-01"\n[models."gpt-5.4"]\ninput = 1\noutput = 2\n'
                    '[models."mimo-v2.5-pro"]\ninput = 1\noutput = 1\n')  # fmt: skip
    table = load_prices(path)
    assert table.cost("gpt-5.4", Tokens(input=2_000_000, cache_read=1_000_000)) == 2.0
    assert table.cost("mimo-v2.5-pro", Tokens(output=2_000_000)) == 2.0
    assert table.price("claude-opus-4-7") == PRICES.price("claude-opus-4-7")
    assert str(path) in table.source and "genai-prices" in table.source
    # dated names take their model's price; a similar name does not
    assert PRICES.price("claude-haiku-4-5-20251001") == PRICES.price("claude-haiku-4-5")
    assert PRICES.price("claude-haiku-4") is None


def test_prices_come_from_the_dataset_at_the_base_rate() -> None:
    """Gemini is priced (the hand-written table had none); a turn's input above a long-context
    tier is priced at the base rate, since a turn sums requests that each stayed below it; a
    router's prefix finds the model."""
    gemini = PRICES.price("gemini-2.5-pro")
    assert gemini is not None and gemini.input == 1.25 and gemini.output == 10.0
    sonnet = PRICES.cost("claude-sonnet-4-5-20250929", Tokens(input=300_000))
    assert sonnet == pytest.approx(300_000 * 3 / 1e6)
    assert PRICES.price("moonshotai/kimi-k2.6") is not None
    assert PRICES.price("anthropic/claude-opus-4-7") == PRICES.price("claude-opus-4-7")
    assert PRICES.price("no-such-model-anywhere") is None
