"""`tracehouse usage`'s quick path (issue #68: p95 ≤ 100 ms): after one full run, a report the
rollup answers is printed from the ledger with nothing but sqlite3 and json loaded, the same
bytes as the full command; anything that could make its report differ sends it back."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reports.test_statusline import ledger  # noqa: F401  (the fixture)
from tests.reports.test_statusline_quick import PROGRAM, _state  # PROGRAM: if settings loaded
from tracehouse.reports.settled import KEPT
from tracehouse.reports.usage_quick import quick_report
from tracehouse.reports.usage_report import ROLLED

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the quick path is XDG's"
)


def _run(*args: str) -> tuple[str, bool]:
    """What `tracehouse usage ARGS` printed, and whether the full path printed it."""
    done = subprocess.run([sys.executable, "-c", PROGRAM, "usage", *args], capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout, done.stderr.strip().endswith("True")


def test_the_second_run_is_quick_and_prints_the_same_bytes(ledger: Path) -> None:  # noqa: F811
    store = ["--store", str(ledger)]
    first, full = _run(*store)
    assert full and (_state() / KEPT).exists()
    flags = [(), ("--utc",), ("--breakdown",), ("--utc", "--breakdown"), ("--breakdown",)]
    for period, flagged in zip(("", *ROLLED), flags, strict=True):  # each flag, and both
        args = [*([period] if period else []), *flagged, *store]
        wanted, _ = _run(*args, "--quiet")  # an option the quick path leaves to typer
        shown, full_again = _run(*args)
        assert not full_again, args
        assert shown == wanted, args
    assert first == _run(*store)[0]
    assert "claude-code" in first and "total" in first and "$" in first


def test_a_window_of_dates_is_quick_and_any_other_goes_to_the_full_path(
    ledger: Path,  # noqa: F811
) -> None:
    """`--since` and `--until` a date (a day of any time zone is whole quarter hours): the
    rollup's window, the same report; a duration back from now, or a window the command
    refuses, is the full path's, which says what is wrong."""
    from datetime import date, timedelta

    store = ["--store", str(ledger)]
    _run(*store)
    today = date.today()
    for window in (("--since", str(today)), ("--until", str(today + timedelta(days=1))),
                   ("--since", str(today - timedelta(days=3)), "--until", str(today))):  # fmt: skip
        wanted, _ = _run(*window, "--quiet", *store)
        shown, full = _run(*window, *store)
        assert not full and shown == wanted, window
    assert _run("--since", "2h", *store)[1]  # now less two hours: not on a quarter
    bad = subprocess.run([sys.executable, "-c", PROGRAM, "usage", "--since", "soon", *store],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and "--since 'soon'" in bad.stderr
    empty = subprocess.run([sys.executable, "-c", PROGRAM, "usage", "--since", str(today),
                            "--until", str(today), *store],
                           capture_output=True, text=True)  # fmt: skip
    assert empty.returncode == 2 and "is not before --until" in empty.stderr


def test_what_could_change_the_report_sends_it_to_the_full_path(
    ledger: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _run("--store", str(ledger))

    def quick(period: str = "daily", store: str | None = str(ledger)) -> object:
        return quick_report(period, store, None, utc=False, breakdown=False, env=os.environ)

    assert quick() is not None
    assert quick(period="session") is None  # a period the rollup does not answer
    assert quick(store=str(tmp_path / "other.db")) is None  # another flag
    monkeypatch.setenv("TRACEHOUSE_STORE", str(tmp_path / "other.db"))  # another ledger
    assert quick() is None
    monkeypatch.delenv("TRACEHOUSE_STORE")
    prices = _state() / "prices.json"
    kept = json.loads(prices.read_text())
    prices.write_text(json.dumps({**kept, "known": {}}))  # a price the memo lacks
    assert quick() is None
    prices.write_text(json.dumps(kept))
    assert quick() is not None
    with sqlite3.connect(ledger) as conn:  # the schema moves (a migration)
        conn.execute("CREATE TABLE later (x)")
    assert quick() is None
    for args in (("--provider", "codex"), ("--since", "2h"), ("--json",), ("--model", "claude")):
        assert _run(*args, "--store", str(ledger))[1], args


def test_the_status_line_and_usage_keep_their_own_states(ledger: Path, tmp_path: Path) -> None:  # noqa: F811
    """The status line hook and a person's `usage` may name the ledger differently: each keeps
    its state, so that neither sends the other back to the full path."""
    config = tmp_path / "empty.toml"
    config.write_text("")
    _run("--store", str(ledger), "--config", str(config))
    _status_line(ledger, json.dumps({"session_id": "x"}))
    assert not _run("--store", str(ledger), "--config", str(config))[1]
    entries = json.loads((_state() / KEPT).read_text())["entries"]
    assert {(e["key"]["store"], e["key"]["config"]) for e in entries} == {
        (str(ledger), str(config)),
        (str(ledger), None),
    }


def test_a_status_line_on_a_day_with_nothing_priced_is_quick_the_next_time(
    ledger: Path,  # noqa: F811
) -> None:
    """The memo of prices is written even when nothing was priced (no turn today): the quick
    paths answer only from a memo bound to the prices in force."""
    from tracehouse.reports.statusline_answer import quick_answer
    from tracehouse.store.sqlite import usage_slots

    with sqlite3.connect(ledger) as conn:
        conn.execute("UPDATE turns SET started_at = '2020-01-01T00:00:00.000Z'")
        usage_slots.rebuild(conn)  # as `store rebuild-usage` does after a change by hand
    _status_line(ledger, "{}")
    assert json.loads((_state() / "prices.json").read_text())["known"] == {}
    assert quick_answer("claude-code", str(ledger), None, "{}", os.environ) == "today $0.00"


def _status_line(store: Path, document: str) -> None:
    subprocess.run([sys.executable, "-c", "from tracehouse.cli.entry import main; main()",
                    "statusline", "--store", str(store)], input=document, text=True,
                   capture_output=True, check=True)  # fmt: skip


def test_on_a_terminal_both_paths_fit_and_style_the_same(ledger: Path) -> None:  # noqa: F811
    """At a terminal 70 columns wide: the same bytes from both paths, styled, the columns a
    ccusage user reads least left out."""
    full, by_typer = _at_terminal("--breakdown", "--quiet", "--store", str(ledger))
    quick, by_typer_again = _at_terminal("--breakdown", "--store", str(ledger))
    assert by_typer and not by_typer_again
    assert quick == full
    assert "\x1b[1mdate" in quick and "\x1b[2m  └ " in quick
    assert "not shown at this width: reasoning" in quick.replace("\r\n", "\n")


def _at_terminal(*args: str) -> tuple[str, bool]:
    """What `tracehouse usage ARGS` shows on a terminal 70 columns wide, and whether the full
    path showed it."""
    import pty

    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "70", "TERM": "xterm"}
    done = subprocess.run([sys.executable, "-c", PROGRAM, "usage", *args], stdout=follower,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=60)  # fmt: skip
    os.close(follower)
    shown = b""
    try:
        while chunk := os.read(leader, 65536):
            shown += chunk
    except OSError:  # the terminal's other end is closed: all has been read
        pass
    os.close(leader)
    assert done.returncode == 0
    return shown.decode(), done.stderr.strip().endswith("True")
