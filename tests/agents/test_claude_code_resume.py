"""`tracehouse resume` end to end with the real Claude Code (from the npm registry) against a
scripted model on 127.0.0.1: a session Claude Code lost, restored, and other agents' sessions
written as new Claude Code sessions, each continued with one more prompt. The request Claude
Code then sends the model carries every prompt and answer of the original, in order."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.servers.anthropic import Anthropic
from conformance.servers.base import Answer, Body, ScriptedModel
from tests.agents.installed import claude_code, offline_env
from tests.conftest import DATA
from tests.resume.shapes import lacking, said
from tracehouse.cli.app import app
from tracehouse.resume.conversation import conversation
from tracehouse.store import open_store

pytestmark = pytest.mark.slow

runner = CliRunner()
NEXT = "one more question, please"
ANSWER = "Here is one more answer."


def continued(claude: Path, home: Path, work: Path, session_id: str) -> list[Body]:
    """`claude --resume ID -p NEXT` in `work`: the requests it sent the model."""
    with ScriptedModel(Anthropic(), lambda request: Answer(text=ANSWER)).running() as model:
        done = subprocess.run(
            [str(claude), "--resume", session_id, "-p", NEXT, "--model", "claude-sonnet-4-5",
             "--output-format", "json"],
            env=offline_env(home, model.url), cwd=work, capture_output=True, text=True,
            timeout=300, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["result"] == ANSWER
    return [body for path, body in model.requests if path == "/v1/messages"]


def sent(body: Body) -> list[tuple[str, str]]:
    """(role, text) of every text block and every call the request carries, in order."""
    out = []
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block.get("type") == "text":
                out.append((message["role"], block["text"]))
            elif block.get("type") == "tool_use":
                out.append((message["role"], json.dumps(block["input"])))
    return out


def the_request(requests: list[Body]) -> list[tuple[str, str]]:
    main = [r for r in requests if any(NEXT in t for _, t in sent(r))]
    assert main, "no request carried the new prompt"
    return sent(main[-1])


def test_a_session_claude_code_deleted_is_restored_and_continued(tmp_path: Path) -> None:
    claude = claude_code()
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    shutil.copytree(DATA / "claude" / "home" / ".claude", home / ".claude")
    ledger = str(tmp_path / "ledger.db")
    backfill = ["sync", "backfill", "--home", str(home), "--store", ledger, "-q"]
    assert runner.invoke(app, backfill).exit_code == 0
    store = open_store(ledger, create=False)
    original = conversation(store, "cc-11111111")
    store.close()
    session = original.session["source_session_id"]
    (home / ".claude" / "projects" / "-tmp-demo" / f"{session}.jsonl").unlink()  # the cleanup

    done = runner.invoke(app, ["resume", "cc-11111111", "--store", ledger, "--cwd", str(work),
                               "--json"], env={"HOME": str(home)})  # fmt: skip
    assert json.loads(done.output)["action"] == "restore", done.output
    request = the_request(continued(claude, home, work, session))
    assert not lacking([*said(original), ("user", NEXT)], request)

    # Claude Code went on in the restored file: imported, the same session, one turn longer
    assert runner.invoke(app, backfill).exit_code == 0
    store = open_store(ledger, create=False)
    try:
        now = conversation(store, "cc-11111111")
    finally:
        store.close()
    assert said(now)[: len(said(original))] == said(original)
    assert said(now)[-2:] == [("user", NEXT), ("assistant", ANSWER)]


@pytest.mark.parametrize("label", ["cx-00000002", "gm-aaaa1111", "oc-abcdef01", "ca-aaaaaaaa",
                                   "cc-a0fix000"])  # fmt: skip
def test_every_agents_session_continues_in_claude_code(
    label: str, tmp_path: Path, data_ledger: Path
) -> None:
    claude = claude_code()
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    ledger = tmp_path / "ledger.db"
    with sqlite3.connect(data_ledger) as source, sqlite3.connect(ledger) as copy:
        source.backup(copy)
    done = runner.invoke(app, ["resume", label, "--in", "claude-code", "--store", str(ledger),
                               "--cwd", str(work), "--json"], env={"HOME": str(home)})  # fmt: skip
    answer = json.loads(done.output)
    store = open_store(ledger, create=False)
    try:
        original = conversation(store, label)
    finally:
        store.close()
    request = the_request(continued(claude, home, work, answer["sessionId"]))
    assert any(label in text for _, text in request)  # the note that says where it came from
    assert not lacking([*said(original), ("user", NEXT)], request)
