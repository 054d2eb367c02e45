"""`tracehouse mcp --print-config AGENT`: what each agent is given is valid in that agent's own
format and starts this installation's server on the ledger the user named."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracehouse.cli.app import app
from tracehouse.mcp_server.agent_config import AGENTS

runner = CliRunner()


def printed(agent: str, store: str) -> str:
    result = runner.invoke(app, ["mcp", "--print-config", agent, "--store", store])
    assert result.exit_code == 0, result.output
    return result.output


def config_part(text: str) -> str:
    """The file snippet after its comment line(s)."""
    return "\n".join(line for line in text.split("\n\n")[-1].splitlines()
                     if not line.startswith("#"))  # fmt: skip


@pytest.mark.parametrize("agent", AGENTS)
def test_a_local_ledger_is_served_over_stdio(agent: str, tmp_path: Path) -> None:
    store = tmp_path / "ledger.db"
    text = printed(agent, str(store))
    if agent == "claude-code":
        words = shlex.split(text)
        assert words[:6] == ["claude", "mcp", "add", "--scope", "user", "tracehouse"]
        command = words[words.index("--") + 1 :]
    elif agent == "codex":
        table = tomllib.loads(config_part(text))["mcp_servers"]["tracehouse"]
        command = [table["command"], *table["args"]]
        assert text.startswith("codex mcp add tracehouse -- ")
    elif agent == "opencode":
        local = json.loads(config_part(text))["mcp"]["tracehouse"]
        assert local["type"] == "local"
        command = local["command"]
    else:
        server = json.loads(config_part(text))["mcpServers"]["tracehouse"]
        command = [server["command"], *server["args"]]
    assert Path(command[0]).is_absolute() and Path(command[0]).exists()
    assert command[-3:] == ["mcp", "--store", str(store.resolve())]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_gateway_is_reached_over_http_with_the_token_from_the_environment(agent: str) -> None:
    text = printed(agent, "https://ledger.example.org/")
    assert "https://ledger.example.org/mcp" in text
    assert "TRACEHOUSE_READ_TOKEN" in text
    if agent == "codex":
        table = tomllib.loads(config_part(text))["mcp_servers"]["tracehouse"]
        assert table == {"url": "https://ledger.example.org/mcp",
                         "bearer_token_env_var": "TRACEHOUSE_READ_TOKEN"}  # fmt: skip
    elif agent != "claude-code":
        json.loads(config_part(text))


def test_wrong_uses_are_named() -> None:
    unknown = runner.invoke(app, ["mcp", "--print-config", "vim"])
    assert unknown.exit_code == 2 and "one of claude-code, codex" in unknown.output
    remote = runner.invoke(app, ["mcp", "--store", "https://ledger.example.org"])
    assert remote.exit_code == 2 and "serves MCP itself at https://ledger.example.org/mcp" in (
        remote.output
    )


def test_a_call_prints_what_an_agent_is_answered(data_ledger: Path) -> None:
    store = ["--store", str(data_ledger)]
    hits = runner.invoke(app, ["mcp", *store, "--call", "search", "--args", '{"query": "pytest"}'])
    assert hits.exit_code == 0 and "hits for 'pytest'" in hits.output
    as_json = runner.invoke(
        app, ["mcp", *store, "--json", "--call", "list_sessions", "--args", '{"limit": 1}']
    )
    answer = json.loads(as_json.output)
    assert answer["tool"] == "list_sessions" and not answer["isError"]
    refused = runner.invoke(app, ["mcp", *store, "--call", "read_session",
                                  "--args", '{"session": "zz-none"}'])  # fmt: skip
    assert refused.exit_code == 1 and "no session matches 'zz-none'" in refused.output
    for args, message in [("[1]", "--args: a JSON object"), ("{", "--args: not JSON")]:
        wrong = runner.invoke(app, ["mcp", *store, "--call", "search", "--args", args])
        assert wrong.exit_code == 2 and message in wrong.output
    unknown = runner.invoke(app, ["mcp", *store, "--call", "delete_everything"])
    assert unknown.exit_code == 1 and "one of files_touched, list_sessions" in unknown.output
