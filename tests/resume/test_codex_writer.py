"""`tracehouse resume` into Codex, without the agent: a rollout Codex lost is written back at
its own path and imports again as the session the ledger holds (its messages, tool calls,
turns and tokens, no second copy of any message); another agent's session is a new rollout
that imports with where it came from. Codex itself continues them in
tests/agents/test_codex_resume.py."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from tests.conftest import DATA
from tests.resume.shapes import lacking, said, shape
from tracehouse.cli.app import app
from tracehouse.resume.conversation import conversation
from tracehouse.store import open_store

runner = CliRunner()
TOTALS = ("SELECT total_tokens, input_tokens, cached_input_tokens, output_tokens, turn_count,"
          " tool_call_count FROM sessions WHERE label = 'cx-00000002'")  # fmt: skip


def test_a_rollout_codex_lost_comes_back_as_the_same_session(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    shutil.copytree(DATA / "codex" / "home" / ".codex", home / ".codex")
    ledger = str(tmp_path / "ledger.db")
    backfill = ["sync", "backfill", "--home", str(home), "--store", ledger, "-q"]
    assert runner.invoke(app, backfill).exit_code == 0
    store = open_store(ledger, create=False)
    original, totals = conversation(store, "cx-00000002"), store.query(TOTALS)
    messages = store.query("SELECT count(*) AS n FROM messages")
    store.close()
    rollout = Path(original.session["source_path"])
    rollout.unlink()
    assert runner.invoke(app, backfill).exit_code == 0
    done = runner.invoke(app, ["resume", "cx-00000002", "--store", ledger, "--cwd", str(work),
                               "--json"], env={"HOME": str(home)})  # fmt: skip
    answer = json.loads(done.output)
    assert answer["action"] == "restore" and answer["path"] == str(rollout)  # its own place
    assert runner.invoke(app, backfill).exit_code == 0
    store = open_store(ledger, create=False)
    try:
        again = conversation(store, "cx-00000002")
        assert store.query(TOTALS) == totals
        assert store.query("SELECT count(*) AS n FROM messages") == messages
    finally:
        store.close()

    def calls_aside_from_outcome(rows: list[tuple]) -> list[tuple]:  # type: ignore[type-arg]
        # A command cut short with its turn comes back unmarked: Codex said so in an event of
        # the turn, which a restored rollout does not repeat.
        return [(r[0], r[1], r[2], [c[:3] for c in r[3]]) for r in rows]

    assert calls_aside_from_outcome(shape(again)) == calls_aside_from_outcome(shape(original))


def test_another_agents_session_becomes_a_new_codex_rollout(
    tmp_path: Path, data_ledger: Path
) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    ledger = tmp_path / "ledger.db"
    with sqlite3.connect(data_ledger) as source, sqlite3.connect(ledger) as copy:
        source.backup(copy)
    args = ["resume", "cc-11111111", "--in", "codex", "--store", str(ledger), "--cwd",
            str(tmp_path), "--json"]  # fmt: skip
    answer = json.loads(runner.invoke(app, args, env={"HOME": str(home)}).output)
    assert answer["action"] == "new" and answer["command"][:2] == ["codex", "resume"]
    path = Path(answer["path"])
    assert path.is_relative_to(home / ".codex" / "sessions") and answer["sessionId"] in path.name
    imported = tmp_path / "imported.db"
    result = runner.invoke(app, ["sync", "backfill", "--home", str(home), "--store",
                                 str(imported), "--json"])  # fmt: skip
    assert json.loads(result.output)["rejects"] == []
    source, written = open_store(ledger, create=False), open_store(imported, create=False)
    try:
        original = conversation(source, "cc-11111111")
        row = written.query("SELECT label, metadata FROM sessions")[0]
        back = conversation(written, row["label"])
    finally:
        source.close()
        written.close()
    assert json.loads(row["metadata"])["continued_from"]["label"] == "cc-11111111"
    assert not lacking(said(original), said(back))
