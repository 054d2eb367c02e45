"""A Cursor composer (from the fixture corpus: Cursor itself resumes nothing from the command
line) continued in the real Claude Code and the real Codex CLI, each against its scripted model
on 127.0.0.1: the request each sends carries every prompt and answer of the composer, in order."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.servers.anthropic import Anthropic
from conformance.servers.base import Answer, ScriptedModel
from conformance.servers.responses import Responses
from tests.agents.installed import claude_code, codex, codex_home, offline_env
from tests.resume.shapes import lacking, said
from tracehouse.cli.app import app
from tracehouse.resume.conversation import conversation
from tracehouse.store import open_store

pytestmark = pytest.mark.slow

runner = CliRunner()
HOME = "Aleksey0x-CursorSync"  # composers with tool calls, in Cursor's current storage
NEXT = "one more question, please"


@pytest.fixture(scope="module")
def composer(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A ledger of one Cursor home, and its composer of the most messages."""
    ledger = tmp_path_factory.mktemp("cursor") / "ledger.db"
    args = ["sync", "backfill", "--home", str(corpus / "homes" / HOME), "--store", str(ledger),
            "-q"]  # fmt: skip
    assert runner.invoke(app, args).exit_code in (0, 1)
    store = open_store(ledger, create=False)
    try:
        row = store.query("SELECT label FROM sessions WHERE source_provider = 'cursor'"
                          " ORDER BY message_count DESC LIMIT 1")[0]  # fmt: skip
    finally:
        store.close()
    return ledger, row["label"]


def test_a_cursor_composer_continues_in_claude_code(
    composer: tuple[Path, str], tmp_path: Path
) -> None:
    claude = claude_code()
    ledger, label = composer
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    reply = Answer(text="Continuing the composer.")
    with ScriptedModel(Anthropic(), lambda request: reply).running() as model:
        env = offline_env(home, model.url)
        answer = json.loads(runner.invoke(app, ["resume", label, "--in", "claude-code", "--store",
                                                str(ledger), "--cwd", str(work), "--json"],
                                          env=env).output)  # fmt: skip
        done = subprocess.run(
            [str(claude), "--resume", answer["sessionId"], "-p", NEXT, "--model",
             "claude-sonnet-4-5", "--output-format", "json"],
            env=env, cwd=work, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    request = _claude_request(model.requests)
    assert not lacking([*_original(ledger, label), ("user", NEXT)], request)


def test_a_cursor_composer_continues_in_codex(composer: tuple[Path, str], tmp_path: Path) -> None:
    binary = codex()
    ledger, label = composer
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    reply = Answer(text="Continuing the composer.")
    with ScriptedModel(Responses(), lambda request: reply, "/v1").running() as model:
        codex_home(home, model.url)
        env = offline_env(home, model.url)
        answer = json.loads(runner.invoke(app, ["resume", label, "--in", "codex", "--store",
                                                str(ledger), "--cwd", str(work), "--json"],
                                          env=env).output)  # fmt: skip
        done = subprocess.run(
            [str(binary), "exec", "--skip-git-repo-check", "resume", answer["sessionId"], NEXT],
            env=env, cwd=work, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    requests = [Responses().read("", b).said for p, b in model.requests if p.endswith("/responses")]
    request = next(r for r in reversed(requests) if any(NEXT in t for _, t in r))
    assert not lacking([*_original(ledger, label), ("user", NEXT)], request)


def _original(ledger: Path, label: str) -> list[tuple[str, str]]:
    store = open_store(ledger, create=False)
    try:
        return said(conversation(store, label))
    finally:
        store.close()


def _claude_request(requests: list[tuple[str, dict]]) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    out: list[tuple[str, str]] = []
    for path, body in requests:
        if path != "/v1/messages":
            continue
        texts: list[tuple[str, str]] = []
        for message in body["messages"]:
            content = message["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            texts += [(message["role"], b["text"]) for b in blocks if b.get("type") == "text"]
        if any(NEXT in t for _, t in texts):
            out = texts
    assert out, "no request carried the new prompt"
    return out
