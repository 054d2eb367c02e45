"""`tracehouse statusline` (issue #68): the line Claude Code shows under its prompt, from the
ledger: today's cost, the active 5-hour block with the time it has left, this session's label
and tokens, a crossed limit first; one line and exit 0 whatever it is given, and the prices it
looked up kept for the next call."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app

SID = "11111111-1111-4111-8111-111111111111"


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """The Claude Code test home, its turns moved to an hour ago, or to this hour where an
    hour ago was yesterday here: today's and in an open block whenever the test runs (a zone
    whose midnight is on the hour)."""
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    now = datetime.now(UTC)
    midnight = now.astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
    hour_ago = max(now - timedelta(hours=1), midnight.astimezone(UTC)).strftime("%Y-%m-%dT%H:")
    for path in (home / ".claude").rglob("*.jsonl"):
        text = path.read_text().replace("2026-03-01T10:", hour_ago)
        path.write_text(text.replace("2026-02-01T09:", hour_ago))
    store = tmp_path / "ledger.db"
    synced = CliRunner().invoke(app, ["sync", "backfill", "--home", str(home), "--store",
                                      str(store), "-q"])  # fmt: skip
    assert synced.exit_code == 0, synced.output
    return store


def _line(store: Path, stdin: str, *extra: str) -> str:
    shown = CliRunner().invoke(app, ["statusline", "--store", str(store), *extra], input=stdin)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert len(lines) == 1
    return lines[0]


def test_the_line_has_today_the_block_and_the_session(ledger: Path, tmp_path: Path) -> None:
    line = _line(ledger, json.dumps({"session_id": SID, "model": {"display_name": "Opus"}}))
    today, block, session = line.split(" · ")
    assert today.startswith("today $") and float(today[7:].rstrip("*").replace(",", "")) >= 0
    assert block.startswith("block $") and block.endswith(" left")
    hours = int(block.split(", ")[1].split("h")[0])
    assert 3 <= hours <= 4  # the block opened at the hour of a turn an hour ago
    assert session.startswith("cc-11111111 ") and session.endswith(" tokens")
    kept = json.loads((tmp_path / "xdg-state" / "tracehouse" / "prices.json").read_text())
    assert kept["known"] and all("|" in key for key in kept["known"])
    assert _line(ledger, json.dumps({"session_id": SID})) == line  # from the kept prices


def test_anything_on_stdin_still_gives_one_line(ledger: Path, tmp_path: Path) -> None:
    for stdin in ("", "not json", "[1, 2]", json.dumps({"session_id": "nope"})):
        assert _line(ledger, stdin).startswith("today $")
    assert _line(ledger, json.dumps({"session_id": "nope"})).endswith("not in the ledger yet")
    missing = _line(tmp_path / "none.db", "{}")
    assert missing.startswith("tracehouse: ") and "ledger" in missing


def test_a_crossed_limit_comes_first(ledger: Path, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[[limits]]\ntokens = 1\nper = "day"\n')
    line = _line(ledger, json.dumps({"session_id": SID}), "--config", str(config))
    assert line.startswith("over limit: everything: ") and "this day" in line


def test_the_kept_prices_are_the_tables_and_a_new_price_file_empties_them(tmp_path: Path) -> None:
    from tracehouse.model.tokens import Tokens
    from tracehouse.reports.price_memo import PriceMemo
    from tracehouse.reports.pricing import load_prices

    own = tmp_path / "prices.toml"
    table = load_prices(own)
    loads: list[int] = []

    def load():  # type: ignore[no-untyped-def]
        loads.append(1)
        return load_prices(own)

    tokens = Tokens(12_000, 800, 9_000, 1_000)
    asked = [("claude-sonnet-4-5-20250929", "2026-03-01"), ("gpt-5.4", "2026-03-02"),
             ("no-such-model", "2026-03-02")]  # fmt: skip
    memo = PriceMemo(tmp_path / "p.json", own, load)
    assert [memo.cost(m, tokens, d) for m, d in asked] == [
        table.cost(m, tokens, d) for m, d in asked
    ]
    memo.save()
    again = PriceMemo(tmp_path / "p.json", own, load)
    assert [again.cost(m, tokens, d) for m, d in asked] == [
        table.cost(m, tokens, d) for m, d in asked
    ]
    assert loads == [1]  # the second memo answered from its file
    own.write_text('[models."no-such-model"]\ninput = 1.0\noutput = 2.0\n')
    changed = PriceMemo(tmp_path / "p.json", own, load)
    assert changed.known == {} and changed.cost("no-such-model", tokens, "2026-03-02") is not None


def test_a_damaged_kept_price_is_asked_of_the_table_again(tmp_path: Path) -> None:
    from tracehouse.model.tokens import Tokens
    from tracehouse.reports.price_memo import PriceMemo
    from tracehouse.reports.pricing import load_prices

    own, memo_file = tmp_path / "prices.toml", tmp_path / "p.json"
    table = load_prices(own)
    memo = PriceMemo(memo_file, own, lambda: load_prices(own))
    tokens, model = Tokens(5_000, 300, 1_000, 0), "claude-sonnet-4-5-20250929"
    expected = memo.cost(model, tokens, "2026-03-01")
    memo.save()
    kept = json.loads(memo_file.read_text())
    kept["known"] = {key: ["not", "a", "price"] for key in kept["known"]}
    memo_file.write_text(json.dumps(kept))
    damaged = PriceMemo(memo_file, own, lambda: load_prices(own))
    assert (
        damaged.cost(model, tokens, "2026-03-01")
        == expected
        == table.cost(model, tokens, "2026-03-01")
    )


def test_the_program_answers_without_typer_and_says_the_same(ledger: Path) -> None:
    """What the agent runs, `tracehouse statusline --store …`, is answered before typer loads
    (`cli/entry.py`), with the line the typer command prints; anything else goes to typer."""
    import subprocess
    import sys

    stdin = json.dumps({"session_id": SID})
    code = (
        "import sys\n"
        "from tracehouse.cli.entry import main\n"
        "try:\n    main()\n"
        "finally:\n    print('typer' in sys.modules, file=sys.stderr)\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code, *args], input=stdin,
                              capture_output=True, text=True)  # fmt: skip

    fast = run("statusline", f"--store={ledger}", "--agent", "claude-code")
    assert fast.returncode == 0, fast.stderr
    assert fast.stderr.strip().endswith("False")
    assert fast.stdout.strip() == _line(ledger, stdin)
    wrong = run("statusline", "--store", str(ledger), "--agent", "nobody")
    assert wrong.returncode == 2 and "--agent 'nobody'" in wrong.stderr
    helped = run("statusline", "--help")
    assert helped.returncode == 0 and "--agent" in helped.stdout
    assert helped.stderr.strip().endswith("True")


def test_a_recent_window_reads_the_turns_of_the_window(ledger: Path) -> None:
    """Today's and the block's turns are found through the index on their start, not by
    reading every turn (the status line's budget is a few milliseconds for its queries)."""
    from tracehouse.reports.filters import build_session_filters
    from tracehouse.reports.usage import turn_sql
    from tracehouse.store import open_store

    where, params = turn_sql(build_session_filters(since="2026-12-01", until="2026-12-02"))
    store = open_store(ledger, create=False)
    try:
        plan = store.query(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM turns t JOIN sessions s"
            f" ON s.session_id = t.session_id WHERE 1 = 1{where}",
            params,
        )
    finally:
        store.close()
    assert any("idx_turns_started" in step["detail"] for step in plan), plan


def test_a_report_that_priced_nothing_keeps_where_the_prices_come_from(tmp_path: Path) -> None:
    """A status line on a day with nothing priced yet asks only where the prices come from; the
    memo keeps that too, or every such call loaded the whole price dataset again."""
    from tracehouse.reports.price_memo import PriceMemo
    from tracehouse.reports.pricing import load_prices

    own, loads = tmp_path / "prices.toml", []

    def load():  # type: ignore[no-untyped-def]
        loads.append(1)
        return load_prices(own)

    first = PriceMemo(tmp_path / "p.json", own, load)
    assert first.source and first.known == {}
    first.save()
    again = PriceMemo(tmp_path / "p.json", own, load)
    assert again.source == first.source and loads == [1]


def test_qwen_codes_status_line_names_its_session_and_no_block(tmp_path: Path) -> None:
    """Qwen Code's `ui.statusLine` command gets its session's id as Claude Code's does (its
    0.24.4 bundle: `session_id`, `model.display_name`, `workspace.current_dir`); Qwen is not
    metered in 5-hour windows, so its line has no block."""
    store = tmp_path / "ledger.db"
    synced = CliRunner().invoke(app, ["sync", "backfill", "--home", str(DATA / "qwen" / "home"),
                                      "--store", str(store), "-q"])  # fmt: skip
    assert synced.exit_code == 0, synced.output
    document = json.dumps({"session_id": "6676775b-e7b1-41b0-a6de-5f00e4adf771",
                           "model": {"display_name": "qwen3-coder-plus"},
                           "workspace": {"current_dir": "/home/dev/site"}})  # fmt: skip
    today, session = _line(store, document, "--agent", "qwen-code").split(" · ")
    assert today.startswith("today $") and session == "qw-6676775b 71k tokens"
    refused = CliRunner().invoke(app, ["statusline", "--agent", "aider", "--store", str(store)])
    assert refused.exit_code == 2 and "claude-code, qwen-code" in refused.output
