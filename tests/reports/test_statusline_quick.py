"""The status line's quick path (issue #68): after one full answer, `tracehouse statusline` as
the agent runs it answers from the ledger with nothing but sqlite3 and json loaded, the same
line; anything that could make its answer differ sends it back to the full path."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reports.test_statusline import SID, ledger  # noqa: F401  (the fixture)
from tracehouse.reports.settled import KEPT
from tracehouse.reports.statusline_answer import quick_answer

DOCUMENT = json.dumps({"session_id": SID})
# The program as the agent starts it, saying afterwards whether the settings were loaded.
PROGRAM = (
    "import sys\n"
    "from tracehouse.cli.entry import main\n"
    "try:\n    main()\n"
    "finally:\n    print('tracehouse.config' in sys.modules, file=sys.stderr)\n"
)


def _run(*args: str) -> tuple[str, bool]:
    """The line printed, and whether the full path answered it."""
    done = subprocess.run([sys.executable, "-c", PROGRAM, "statusline", *args], input=DOCUMENT,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout.strip(), done.stderr.strip().endswith("True")


def _state() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "tracehouse"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the quick path is XDG's")
def test_the_second_call_is_quick_and_says_the_same(ledger: Path) -> None:  # noqa: F811
    first, full = _run("--store", str(ledger))
    assert full and (_state() / KEPT).exists()
    second, full_again = _run("--store", str(ledger))
    assert not full_again
    assert second == first
    today, block, session = second.split(" · ")  # turns an hour ago: priced, a block open
    assert today.startswith("today $") and block.startswith("block $")
    assert session == "cc-11111111 5k tokens"
    known = json.loads((_state() / "prices.json").read_text())["known"]
    assert any(rates for rates in known.values())  # the quick path priced from the memo


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the quick path is XDG's")
def test_what_could_change_the_answer_sends_it_to_the_full_path(
    ledger: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _run("--store", str(ledger))

    def quick(store: str | None = str(ledger), config: str | None = None) -> str | None:
        return quick_answer("claude-code", store, config, DOCUMENT, os.environ)

    assert quick() is not None
    assert quick(store=str(tmp_path / "other.db")) is None  # another flag
    assert quick_answer("codex", str(ledger), None, DOCUMENT, os.environ) is None
    monkeypatch.setenv("TRACEHOUSE_WORKERS", "3")  # the environment that names settings
    assert quick() is None
    monkeypatch.delenv("TRACEHOUSE_WORKERS")
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "tracehouse" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("workers = 2\n")  # the config file appears
    assert quick() is None
    config.unlink()
    assert quick() is not None

    prices = _state() / "prices.json"
    kept = json.loads(prices.read_text())
    prices.write_text(json.dumps({**kept, "known": {}}))  # a price the memo lacks
    assert quick() is None
    prices.write_text(json.dumps(kept))
    with sqlite3.connect(ledger) as conn:  # the schema moves (a migration)
        conn.execute("CREATE TABLE later (x)")
    assert quick() is None
    (_state() / KEPT).write_text("not json")
    assert quick() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the quick path is XDG's")
def test_limits_are_the_full_paths(ledger: Path, tmp_path: Path) -> None:  # noqa: F811
    config = tmp_path / "c.toml"
    config.write_text('[[limits]]\ntokens = 1\nper = "day"\n')
    for _ in range(2):
        line, full = _run("--store", str(ledger), "--config", str(config))
        assert full and line.startswith("over limit: ")


def test_the_lines_figures_are_the_usage_and_block_reports(ledger: Path) -> None:  # noqa: F811
    """The line's SQL is its own (the reports' modules are too heavy to load), so its today and
    block must be the daily report's total and the block report's active block, to the cent."""
    from datetime import UTC, datetime

    from tracehouse.model.tokens import Tokens
    from tracehouse.reports.blocks import blocks
    from tracehouse.reports.filters import build_session_filters
    from tracehouse.reports.price_data import Price
    from tracehouse.reports.pricing import priced
    from tracehouse.reports.statusline import LOOK_BACK, status_line
    from tracehouse.reports.usage import usage
    from tracehouse.store import open_store

    dear = Price(40_000.0, 90_000.0, 3_000.0, None)  # rates that make a few tokens cost cents

    class Prices:
        source = "test"

        def price(self, model: str | None, at: str | None = None) -> Price | None:
            return None if model and "haiku" in model else dear

        def cost(self, model: str | None, tokens: Tokens, at: str | None = None) -> float | None:
            return priced(self.price(model, at), tokens)

    def rates_of(model: str | None, day: str) -> tuple[float, float, float | None, None] | None:
        p = Prices().price(model, day)
        return None if p is None else (p.input, p.output, p.cache_read, None)

    now = datetime.now(UTC)
    store = open_store(ledger, create=False)
    try:
        line = status_line(store.query, {}, rates_of, now=now)
        assert status_line(store.query, {}, rates_of, now=now, rolled=True) == line
        midnight = now.astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
        total = usage(store, "daily", build_session_filters(since=midnight.isoformat()),
                      Prices()).total  # fmt: skip
        since = (now - LOOK_BACK).isoformat()
        found = blocks(store, build_session_filters(providers=["claude-code"], since=since),
                       Prices())  # fmt: skip
    finally:
        store.close()
    active = [b for b in found if b.active(now)][-1]
    today, block = line.split(" · ")
    assert total.cost > 1 and today == f"today ${total.cost:,.2f}" + ("*" * bool(total.unpriced))
    assert block.startswith(f"block ${active.cost:,.2f}" + ("*" * bool(active.unpriced)) + ", ")


def test_the_working_directory_is_in_the_key_only_where_a_path_is_relative(tmp_path: Path) -> None:
    """A relative `--store` names another ledger in another folder; an absolute one does not,
    so that sessions in many projects share one kept state."""
    from tracehouse.reports.settled import key

    env = {"HOME": str(tmp_path), "TRACEHOUSE_CONFIG": "/etc/tracehouse.toml", "PATH": "/bin"}
    assert key(env, "ledger.db", None)["cwd"] == os.getcwd()
    assert key(env, str(tmp_path / "ledger.db"), None)["cwd"] is None
    assert key(env, "postgresql://db/x", None)["cwd"] is None
    assert key({**env, "TRACEHOUSE_STORE": "here.db"}, None, None)["cwd"] == os.getcwd()
    assert "PATH" not in key(env, None, None)["env"]  # what does not name a setting is left out
