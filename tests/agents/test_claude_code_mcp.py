"""End to end with a real agent: Claude Code (from the npm registry) runs with `tracehouse mcp`
configured, against a scripted model on 127.0.0.1. The model finds the tool among Claude
Code's deferred tools, calls `search` for a phrase from a session in the ledger, and Claude
Code's next request carries the hit back to the model. Then the session Claude Code wrote,
imported, holds that call and its result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.servers.anthropic import Anthropic
from conformance.servers.base import Answer, Call, Request, ScriptedModel
from tests.agents.installed import claude_code, offline_env
from tracehouse.cli.app import app
from tracehouse.store import open_store

pytestmark = pytest.mark.slow

SEARCH = "mcp__tracehouse__search"
PHRASE = "ZeroDivisionError"  # said in cc-11111111 of tests/data/claude/home


def script(request: Request) -> Answer:
    """Find the tool (Claude Code defers MCP tools behind ToolSearch), search, then answer."""
    results = request.results
    if SEARCH in request.tools:
        if not any(PHRASE in r for r in results):
            return Answer(text="Let me look.", calls=(Call(SEARCH, {"query": PHRASE}),))
        return Answer(text="It was fixed in cc-11111111 with a guarded division.")
    if "ToolSearch" in request.tools and SEARCH in json.dumps(request.body) and not results:
        found = Call("ToolSearch", {"query": f"select:{SEARCH}", "max_results": 1})
        return Answer(calls=(found,))
    return Answer(text="Division error fix")  # a side request: a title, a summary


def test_claude_code_consults_the_ledger_over_mcp(data_ledger: Path, tmp_path: Path) -> None:
    claude = claude_code()
    home = tmp_path / "home"
    home.mkdir()
    command = ["-m", "tracehouse.cli.app", "mcp", "--store", str(data_ledger)]
    server = {"command": sys.executable, "args": command}
    with ScriptedModel(Anthropic(), script).running() as model:
        done = subprocess.run(
            [str(claude), "-p", "How did we fix the division error before?",
             "--mcp-config", json.dumps({"mcpServers": {"tracehouse": server}}),
             "--strict-mcp-config", "--allowedTools", SEARCH, "--model", "claude-sonnet-4-5",
             "--output-format", "json"],
            env=offline_env(home, model.url), cwd=home, capture_output=True, text=True,
            timeout=300, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["result"].startswith("It was fixed in cc-11111111")
    asked = [body for path, body in model.requests if path == "/v1/messages"]
    offered = [b for b in asked if SEARCH in json.dumps(b)]
    assert offered, "Claude Code never told the model of the tracehouse tools"
    carried = [r for b in asked for r in Anthropic().read("", b).results if PHRASE in r]
    assert carried and "cc-11111111" in carried[-1] and f"**{PHRASE}**" in carried[-1]

    # What Claude Code wrote of the session, imported, holds the call and the hit it returned.
    ledger = tmp_path / "agent.db"
    imported = CliRunner().invoke(
        app, ["sync", "backfill", "--home", str(home), "--store", str(ledger), "-q"]
    )
    assert imported.exit_code == 0, imported.output
    store = open_store(ledger, create=False)
    try:
        calls = store.query(
            "SELECT params, result, status FROM tool_calls WHERE tool_name = ?", [SEARCH]
        )
    finally:
        store.close()
    assert len(calls) == 1 and json.loads(calls[0]["params"]) == {"query": PHRASE}
    assert "cc-11111111" in calls[0]["result"] and calls[0]["status"] == "completed"
