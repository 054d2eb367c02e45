"""The MCP Inspector's CLI (from the npm registry, installed by `.ci/run` under
conformance/npm) lists and calls every tool, over stdio and through the gateway: a client that
is not our SDK's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agents.installed import NODE_MODULES, required
from tests.mcp_server.protocol import INVALID, TOOLS, VALID, stdio

pytestmark = pytest.mark.slow

INSPECTOR = NODE_MODULES / ".bin" / "inspector"


@pytest.fixture(scope="module")
def inspector() -> Path:
    return required(INSPECTOR, "the MCP Inspector")


def inspect(inspector: Path, target: list[str], method: str, tool: str | None = None,
            args: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    command = [str(inspector), "--cli", *target, "--method", method]
    if tool is not None:
        command += ["--tool-name", tool]
    if args:
        command += ["--tool-arg", *(f"{k}={json.dumps(v) if not isinstance(v, str) else v}"
                                    for k, v in args.items())]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    # The answer is the first JSON document on stdout (a tool error adds a line after it).
    answer, _end = json.JSONDecoder().raw_decode(done.stdout.lstrip())
    return dict(answer)


def text_of(answer: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in answer["content"])


def test_the_inspector_lists_and_calls_every_tool(inspector: Path, data_ledger: Path) -> None:
    server = stdio(str(data_ledger))
    target = [server.command, *server.args]
    listed = inspect(inspector, target, "tools/list")
    assert {t["name"] for t in listed["tools"]} == TOOLS
    for tool in listed["tools"]:
        assert len(tool["description"]) > 100 and "\n" not in tool["description"]
    for name, args, expected in VALID:
        answer = inspect(inspector, target, "tools/call", name, args)
        assert not answer["isError"] and expected in text_of(answer), (name, answer)
    for name, args, expected in INVALID[:1] + INVALID[3:4]:  # a tool's own errors
        answer = inspect(inspector, target, "tools/call", name, args)
        assert answer["isError"] and expected in text_of(answer), (name, answer)


def test_the_inspector_reaches_the_gateway_with_a_read_token(inspector: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    served, tokens = gateway
    target = [served.url + "/mcp", "--header", f"Authorization: Bearer {tokens['read']}"]
    listed = inspect(inspector, target, "tools/list")
    assert {t["name"] for t in listed["tools"]} == TOOLS
    name, args, expected = VALID[3]
    answer = inspect(inspector, target, "tools/call", name, args)
    assert not answer["isError"] and expected in text_of(answer)
