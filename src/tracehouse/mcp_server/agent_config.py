"""`tracehouse mcp --print-config AGENT`: the setup a user copies into each agent.

A local ledger is served over stdio: the agent starts `tracehouse mcp` itself, named by its
absolute path (agents start servers without the user's shell, so a bare name may not be
found). A gateway serves the tools itself at `/mcp`: the agent connects there with a read
token taken from the environment, never written into its config by us.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

from tracehouse.errors import ConfigError

AGENTS = ("claude-code", "codex", "gemini-cli", "cursor", "opencode")
TOKEN_VARIABLE = "TRACEHOUSE_READ_TOKEN"
NAME = "tracehouse"


def server_command(store: str | None, config: Path | None) -> list[str]:
    """The command an agent runs to start the server over stdio: this installation's
    `tracehouse`, with the ledger and config file the user named."""
    found = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if found is not None and found.name == "tracehouse" and found.is_file():
        command = [str(found), "mcp"]
    elif shutil.which("tracehouse"):
        command = [str(Path(str(shutil.which("tracehouse"))).resolve()), "mcp"]
    else:
        command = [sys.executable, "-m", "tracehouse.cli.app", "mcp"]
    if store:
        command += ["--store", store if "://" in store else str(Path(store).resolve())]
    if config:
        command += ["--config", str(config.resolve())]
    return command


def stdio_config(agent: str, command: list[str]) -> str:
    exe, args = command[0], command[1:]
    quoted = shlex.join(command)
    servers = {NAME: {"command": exe, "args": args}}
    if agent == "claude-code":
        return f"claude mcp add --scope user {NAME} -- {quoted}"
    if agent == "codex":
        toml_args = ", ".join(json.dumps(a) for a in args)
        return (
            f"codex mcp add {NAME} -- {quoted}\n\n"
            f"# or, the same in ~/.codex/config.toml:\n"
            f"[mcp_servers.{NAME}]\ncommand = {json.dumps(exe)}\nargs = [{toml_args}]"
        )
    if agent == "gemini-cli":
        return (
            f"gemini mcp add --scope user {NAME} {quoted}\n\n"
            f"# or, the same in ~/.gemini/settings.json:\n{_json({'mcpServers': servers})}"
        )
    if agent == "cursor":
        return "# ~/.cursor/mcp.json (Cursor and the cursor-agent CLI):\n" + _json(
            {"mcpServers": servers}
        )
    if agent == "opencode":
        local = {NAME: {"type": "local", "command": command, "enabled": True}}
        return f"# ~/.config/opencode/opencode.json:\n{_json({'mcp': local})}"
    raise ConfigError(f"--print-config {agent!r}: one of {', '.join(AGENTS)}")


def http_config(agent: str, gateway: str) -> str:
    """Setup for a gateway's `/mcp`, the read token in ${TRACEHOUSE_READ_TOKEN}, each agent
    naming the variable its own way."""
    url = gateway.rstrip("/") + "/mcp"
    note = (f"# with a read token (tracehouse serve tokens add NAME --scope read) in"
            f" ${TOKEN_VARIABLE}\n")  # fmt: skip
    if agent == "claude-code":
        return (note + f"claude mcp add --scope user --transport http {NAME} {url}"
                f' --header "Authorization: Bearer ${TOKEN_VARIABLE}"')  # fmt: skip
    if agent == "codex":
        return (note + f"# ~/.codex/config.toml:\n[mcp_servers.{NAME}]\nurl = {json.dumps(url)}\n"
                f'bearer_token_env_var = "{TOKEN_VARIABLE}"')  # fmt: skip
    files = {
        "gemini-cli": ("~/.gemini/settings.json", "mcpServers", "httpUrl", f"${TOKEN_VARIABLE}"),
        "cursor": ("~/.cursor/mcp.json", "mcpServers", "url", f"${{env:{TOKEN_VARIABLE}}}"),
        "opencode": ("~/.config/opencode/opencode.json", "mcp", "url",
                     f"{{env:{TOKEN_VARIABLE}}}"),
    }  # fmt: skip
    if agent not in files:
        raise ConfigError(f"--print-config {agent!r}: one of {', '.join(AGENTS)}")
    where, table, key, variable = files[agent]
    server: dict[str, object] = {key: url, "headers": {"Authorization": f"Bearer {variable}"}}
    if agent == "opencode":
        server = {"type": "remote", **server, "enabled": True}
    return note + f"# {where}:\n{_json({table: {NAME: server}})}"


def _json(value: object) -> str:
    return json.dumps(value, indent=2)
