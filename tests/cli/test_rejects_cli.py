"""`tracehouse rejects` and the options that used to do nothing or damage (exit 2 now)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app

runner = CliRunner()


def cli(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def test_rejects_lists_what_was_refused_then_shows_it_resolved(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    main = next((home / ".claude" / "projects" / "-tmp-demo").glob("1111*.jsonl"))
    good = main.read_bytes()
    main.write_bytes(good + b'{"type":"user","n":NaN}\n')
    ledger = tmp_path / "ledger.db"
    assert cli("sync", "backfill", "--home", home, "--store", ledger, "-q").exit_code == 1

    shown = cli("rejects", "--store", ledger)
    assert shown.exit_code == 0
    assert f"{main} line 32" in shown.stdout and "NaN is not a JSON number" in shown.stdout
    assert "1 unresolved" in shown.stdout and "sync backfill" in shown.stdout

    main.write_bytes(good)
    assert cli("sync", "backfill", "--home", home, "--store", ledger, "-q").exit_code == 0
    assert "no rejects" in cli("rejects", "--store", ledger).stdout
    resolved = json.loads(cli("rejects", "--resolved", "--json", "--store", ledger).stdout)
    assert [(r["location"], bool(r["resolved_at"])) for r in resolved] == [
        ("line 32 (byte 12801)", True)
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("sessions", "list", "--limit", "-3"), "--limit -3: give a number from 1"),
        (("sessions", "list", "--provider", "claude"), "known providers are claude-code"),
        (("rejects", "--provider", "gpt"), "known providers are claude-code"),
        (("rejects", "--limit", "0"), "--limit 0"),
        (
            ("sync", "live", "--full-scan-interval", "-1"),
            "--full-scan-interval -1.0: give at least",
        ),
        (("sync", "live", "--full-scan-interval", "0"), "--full-scan-interval 0.0"),
    ],
)
def test_an_option_that_would_do_nothing_or_harm_is_refused(tmp_path, args, message) -> None:
    ledger = tmp_path / "ledger.db"
    cli("store", "init", "--store", ledger)
    result = cli(*args, "--store", ledger)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_version_and_shell_completion(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracehouse import __version__

    result = cli("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"tracehouse {__version__}"
    # typer finds the shell among the test's parent processes, which a CI runner need not
    # have: the user's shell is bash here, whatever ran the tests.
    import shellingham

    monkeypatch.setattr(shellingham, "detect_shell", lambda: ("bash", "/bin/bash"))
    shown = cli("--show-completion")
    assert shown.exit_code == 0, (shown.output, shown.exc_info)
    assert "_TRACEHOUSE_COMPLETE" in shown.stdout


def test_runs_shows_throughput_and_counts_dedupe_hits_on_a_rerun(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    ledger = tmp_path / "ledger.db"
    for extra in ((), ("--full",)):  # --full parses again: every item is skipped by fingerprint
        assert (
            cli("sync", "backfill", "--home", home, "--store", ledger, "-q", *extra).exit_code == 0
        )
    rows = json.loads(cli("runs", "--json", "--store", ledger).stdout)
    rerun, first = rows
    assert first["imported"] == 3 and first["dedupe_hits"] == 0 and first["mb_per_s"] > 0
    assert rerun["skipped"] == 3 and rerun["dedupe_hits"] == 3 and rerun["dedupe_rate"] == 1.0
    table = cli("runs", "--store", ledger, "--mode", "backfill")
    assert table.exit_code == 0 and "MB/s" in table.stdout and "100%" in table.stdout
    assert cli("runs", "--store", ledger, "--mode", "nightly").exit_code == 2


def test_an_idempotency_replay_is_a_run_of_its_own(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.db"
    request = tmp_path / "request.json"
    body = json.loads((DATA / "request.json").read_text())
    request.write_text(json.dumps({**body, "idempotencyKey": "push-1"}))
    for _ in range(2):
        assert cli("import", request, "--store", ledger, "-q").exit_code == 0
    replay, first = json.loads(cli("runs", "--json", "--store", ledger).stdout)
    assert (first["imported"], first["finished_at"] is not None) == (2, True)
    assert (replay["skipped"], replay["dedupe_hits"], replay["rows_written"]) == (2, 2, 0)
    assert replay["bytes_read"] == request.stat().st_size


def _home_with_a_reject(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The test home with one line no store can hold, backfilled: (home, its file, ledger)."""
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    main = next((home / ".claude" / "projects" / "-tmp-demo").glob("1111*.jsonl"))
    main.write_bytes(main.read_bytes() + b'{"type":"user","n":NaN}\n')
    ledger = tmp_path / "ledger.db"
    assert cli("sync", "backfill", "--home", home, "--store", ledger, "-q").exit_code == 1
    return home, main, ledger


def test_a_reject_acknowledged_by_hand_stays_resolved_until_reread(tmp_path: Path) -> None:
    home, main, ledger = _home_with_a_reject(tmp_path)

    done = cli("rejects", "--acknowledge", main, "--store", ledger)
    assert done.exit_code == 0 and "1 reject(s)" in done.stdout
    assert "no rejects" in cli("rejects", "--store", ledger).stdout
    assert cli("sync", "backfill", "--home", home, "--store", ledger, "-q").exit_code == 0
    again = cli("rejects", "--acknowledge", main, "--store", ledger)
    assert again.exit_code == 2 and "no unresolved rejects there" in again.stderr
    # Read from the start again, the same line is refused again.
    assert cli("sync", "backfill", "--full", "--home", home, "--store", ledger, "-q").exit_code == 1
    assert "NaN is not a JSON number" in cli("rejects", "--store", ledger).stdout


def test_a_file_to_acknowledge_may_be_named_relative_to_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _home, main, ledger = _home_with_a_reject(tmp_path)
    monkeypatch.chdir(main.parent)
    done = cli("rejects", "--acknowledge", main.name, "--store", ledger)
    assert done.exit_code == 0 and "1 reject(s)" in done.stdout
