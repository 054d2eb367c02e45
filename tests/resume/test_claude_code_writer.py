"""`tracehouse resume` into Claude Code, without the agent: what it writes, where, and that the
project's own parser reads it back as the conversation it was written from. The agent itself
continues what is written in tests/agents/test_claude_code_resume.py."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tests.resume.shapes import lacking, said, shape
from tracehouse.cli.app import app
from tracehouse.resume.claude_code import as_claude
from tracehouse.resume.conversation import conversation
from tracehouse.store import open_store

runner = CliRunner()
SESSION = "11111111-1111-4111-8111-111111111111"  # cc-11111111: a subagent, calls, notices


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home whose Claude Code has run (its ~/.claude exists), and a workspace."""
    (tmp_path / "home" / ".claude").mkdir(parents=True)
    (tmp_path / "work").mkdir()
    return tmp_path / "home"


def cli(home: Path, *args: str) -> object:
    return runner.invoke(app, list(args), env={"HOME": str(home)})


def copy_of(ledger: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy.db"
    with sqlite3.connect(ledger) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return copy


def test_a_session_its_agent_lost_is_restored_whole(home: Path, tmp_path: Path) -> None:
    shutil.copytree(
        DATA / "claude" / "home" / ".claude" / "projects", home / ".claude" / "projects"
    )
    ledger = str(tmp_path / "ledger.db")
    assert (
        cli(home, "sync", "backfill", "--home", str(home), "--store", ledger, "-q").exit_code == 0
    )
    before = open_store(ledger, create=False)
    original = conversation(before, "cc-11111111")
    totals = before.query(
        "SELECT total_tokens, turn_count FROM sessions WHERE label = 'cc-11111111'"
    )
    before.close()
    kept = cli(home, "resume", "cc-11111111", "--store", ledger, "--json")
    assert json.loads(kept.output)["action"] == "present"  # the agent still has it: no write

    (home / ".claude" / "projects" / "-tmp-demo" / f"{SESSION}.jsonl").unlink()  # 30 days on
    assert (
        cli(home, "sync", "backfill", "--home", str(home), "--store", ledger, "-q").exit_code == 0
    )
    work = tmp_path / "work"
    done = cli(home, "resume", "cc-11111111", "--store", ledger, "--cwd", str(work), "--json")
    answer = json.loads(done.output)
    folder = re.sub(r"[^A-Za-z0-9]", "-", str(work))  # as Claude Code names a project's folder
    path = home / ".claude" / "projects" / folder / f"{SESSION}.jsonl"
    assert answer["action"] == "restore" and answer["written"] and answer["path"] == str(path)
    assert answer["command"] == ["claude", "--resume", SESSION]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    # imported again, it is the session it restores: same id, conversation and tokens
    result = cli(home, "sync", "backfill", "--home", str(home), "--store", ledger, "--json")
    assert json.loads(result.output)["rejects"] == []
    after = open_store(ledger, create=False)
    try:
        assert shape(conversation(after, "cc-11111111")) == shape(original)
        again = "SELECT total_tokens, turn_count FROM sessions WHERE label = 'cc-11111111'"
        assert after.query(again) == totals
        assert after.query("SELECT count(*) AS n FROM sessions WHERE label LIKE 'cc-1111%'") == [
            {"n": 1}
        ]
    finally:
        after.close()
    refused = cli(home, "resume", "cc-11111111", "--store", ledger, "--cwd", str(work))
    assert refused.exit_code == 0 and "still has it" in refused.output  # its file is back


@pytest.mark.parametrize("label", ["cx-00000002", "gm-aaaa1111", "oc-abcdef01", "ca-aaaaaaaa",
                                   "cc-a0fix000"])  # fmt: skip
def test_another_agents_session_becomes_a_new_claude_code_session(
    label: str, home: Path, tmp_path: Path, data_ledger: Path
) -> None:
    ledger = str(copy_of(data_ledger, tmp_path))
    work = tmp_path / "work"
    dry = cli(home, "resume", label, "--in", "claude-code", "--store", ledger, "--cwd", str(work),
              "--dry-run", "--json")  # fmt: skip
    assert dry.exit_code == 0 and not json.loads(dry.output)["written"]
    assert not (home / ".claude" / "projects").exists()
    done = cli(home, "resume", label, "--in", "claude-code", "--store", ledger, "--cwd",
               str(work), "--json")  # fmt: skip
    answer = json.loads(done.output)
    assert answer["action"] == "new" and answer["written"]
    lines = [json.loads(x) for x in Path(answer["path"]).read_text().splitlines()]
    assert lines[0]["type"] == "tracehouse-origin"
    assert lines[0]["continuedFrom"]["label"] == label

    imported = tmp_path / "imported.db"
    result = cli(home, "sync", "backfill", "--home", str(home), "--store", str(imported), "--json")
    assert json.loads(result.output)["rejects"] == []
    source, copy = open_store(ledger, create=False), open_store(imported, create=False)
    try:
        original = conversation(source, label)
        written = conversation(copy, "cc-" + answer["sessionId"][:8])
        row = copy.query("SELECT metadata FROM sessions")[0]
    finally:
        source.close()
        copy.close()
    # every prompt and answer, in order, after the note that says where they come from
    assert written.steps[0].role == "context" and label in written.steps[0].text
    assert not lacking(said(original), said(written))
    assert json.loads(row["metadata"])["continued_from"]["label"] == label
    again = cli(home, "resume", label, "--in", "claude-code", "--store", ledger, "--cwd",
                str(work), "--json")  # fmt: skip
    twice = json.loads(again.output)  # the same continuation, never a second file
    assert twice["action"] == "present" and twice["sessionId"] == answer["sessionId"]
    assert not twice["written"] and twice["path"] == answer["path"]
    shown = [(c.name, c.params) for s in written.steps for c in s.calls]
    text = "\n".join(s.text for s in written.steps)
    for call in (c for s in original.spoken for c in s.calls):
        mapped = as_claude(call)  # a Claude Code call where it has one, else text naming it
        assert (mapped in shown) if mapped else (f"[{call.name} " in text), call


def test_it_never_writes_over_a_file_or_where_the_agent_is_not(
    home: Path, tmp_path: Path, data_ledger: Path
) -> None:
    ledger = str(copy_of(data_ledger, tmp_path))
    nowhere = tmp_path / "nobody"
    nowhere.mkdir()
    missing = cli(nowhere, "resume", "cx-00000002", "--in", "claude-code", "--store", ledger,
                  "--cwd", str(tmp_path / "work"))  # fmt: skip
    assert missing.exit_code == 2 and "which does not exist" in missing.output
    assert "it would go to" in missing.output and not (nowhere / ".claude").exists()
    for args, message in [
        (("--in", "vim"), "--in 'vim'"),
        (("--in", "gemini-cli"), "writes sessions for claude-code, codex"),
    ]:
        wrong = cli(home, "resume", "cx-00000002", *args, "--store", ledger)
        assert wrong.exit_code == 2 and message in wrong.output
    unknown = cli(home, "resume", "zz-00000000", "--store", ledger)
    assert unknown.exit_code == 2 and "no session matches" in unknown.output
