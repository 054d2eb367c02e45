"""`tracehouse resume --in codex` end to end with the real Codex CLI (from the npm registry)
against a scripted Responses API on 127.0.0.1: a session of each agent in tests/data written as
a Codex rollout and continued with `codex exec resume ID PROMPT`. The request Codex then sends
carries every prompt and answer of the original, in order; the rollout Codex went on writing
imports as the same session, one turn longer."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.servers.base import Answer, Body, ScriptedModel
from conformance.servers.responses import Responses
from tests.agents.installed import codex, codex_home, offline_env
from tests.conftest import DATA
from tests.resume.shapes import lacking, said
from tracehouse.cli.app import app
from tracehouse.resume.conversation import conversation
from tracehouse.store import open_store

pytestmark = pytest.mark.slow

runner = CliRunner()


def sent(body: Body) -> list[tuple[str, str]]:
    return Responses().read("", body).said


NEXT = "one more question, please"
ANSWER = "Here is one more answer from Codex."


@pytest.mark.parametrize("label", ["cc-11111111", "gm-aaaa1111", "oc-abcdef01", "ca-aaaaaaaa",
                                   "cc-a0fix000"])  # fmt: skip
def test_every_agents_session_continues_in_codex(
    label: str, tmp_path: Path, data_ledger: Path
) -> None:
    binary = codex()
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    ledger = tmp_path / "ledger.db"
    with sqlite3.connect(data_ledger) as source, sqlite3.connect(ledger) as copy:
        source.backup(copy)
    with ScriptedModel(Responses(), lambda request: Answer(text=ANSWER), "/v1").running() as model:
        codex_home(home, model.url)
        env = offline_env(home, model.url)
        done = runner.invoke(app, ["resume", label, "--in", "codex", "--store", str(ledger),
                                   "--cwd", str(work), "--json"], env=env)  # fmt: skip
        answer = json.loads(done.output)
        assert answer["target"] == "codex" and answer["written"], done.output
        ran = subprocess.run(
            [str(binary), "exec", "--skip-git-repo-check", "resume", answer["sessionId"], NEXT],
            env=env, cwd=work, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ANSWER in ran.stdout
    requests = [sent(body) for path, body in model.requests if path.endswith("/responses")]
    request = next(r for r in reversed(requests) if any(NEXT in t for _, t in r))
    store = open_store(ledger, create=False)
    try:
        original = conversation(store, label)
    finally:
        store.close()
    assert any(label in text for _, text in request)  # the note that says where it came from
    assert not lacking([*said(original), ("user", NEXT)], request)

    imported = tmp_path / "imported.db"
    result = runner.invoke(app, ["sync", "backfill", "--home", str(home), "--store",
                                 str(imported), "--json"])  # fmt: skip
    assert json.loads(result.output)["rejects"] == []
    copy_ = open_store(imported, create=False)
    try:
        row = copy_.query("SELECT label, metadata FROM sessions")[0]
        again = conversation(copy_, row["label"])
    finally:
        copy_.close()
    assert json.loads(row["metadata"])["continued_from"]["label"] == label
    assert ("user", NEXT) in said(again) and ("assistant", ANSWER) in said(again)


def test_a_rollout_codex_lost_is_restored_and_continued(tmp_path: Path) -> None:
    binary = codex()
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    shutil.copytree(DATA / "codex" / "home" / ".codex", home / ".codex")
    ledger = str(tmp_path / "ledger.db")
    backfill = ["sync", "backfill", "--home", str(home), "--store", ledger, "-q"]
    assert runner.invoke(app, backfill).exit_code == 0
    store = open_store(ledger, create=False)
    original = conversation(store, "cx-00000002")
    store.close()
    session = original.session["source_session_id"]
    rollout = Path(original.session["source_path"])
    rollout.unlink()  # archived away, or another machine's session from the team ledger
    assert runner.invoke(app, backfill).exit_code == 0
    with ScriptedModel(Responses(), lambda request: Answer(text=ANSWER), "/v1").running() as model:
        codex_home(home, model.url)
        env = offline_env(home, model.url)
        done = runner.invoke(app, ["resume", "cx-00000002", "--store", ledger, "--cwd",
                                   str(work), "--json"], env=env)  # fmt: skip
        answer = json.loads(done.output)
        assert answer["action"] == "restore" and answer["sessionId"] == session, done.output
        ran = subprocess.run(
            [str(binary), "exec", "--skip-git-repo-check", "resume", session, NEXT],
            env=env, cwd=work, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    requests = [sent(body) for path, body in model.requests if path.endswith("/responses")]
    request = next(r for r in reversed(requests) if any(NEXT in t for _, t in r))
    assert not lacking([*said(original), ("user", NEXT)], request)

    assert runner.invoke(app, backfill).exit_code == 0  # the same session, one turn longer
    store = open_store(ledger, create=False)
    try:
        sessions = store.query("SELECT session_id FROM sessions WHERE label = 'cx-00000002'")
        texts = [r["content"] for r in store.query(
            "SELECT m.content FROM messages m JOIN sessions s ON s.session_id = m.session_id"
            " WHERE s.label = 'cx-00000002' ORDER BY m.seq")]  # fmt: skip
    finally:
        store.close()
    assert len(sessions) == 1  # the session it restores, not a second one
    assert [t for t in texts if t in (NEXT, ANSWER)] == [NEXT, ANSWER]
    for _role, text in said(original):
        assert text in texts
