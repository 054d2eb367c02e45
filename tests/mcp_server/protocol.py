"""One conversation with the server through the SDK's own client, over any transport: the
handshake, the tool list, each tool called with valid and with invalid arguments."""

from __future__ import annotations

import sys
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TOOLS = {"search", "list_sessions", "read_session", "files_touched", "usage"}
VALID: list[tuple[str, dict[str, Any], str]] = [  # (tool, arguments, text the answer holds)
    ("search", {"query": "ZeroDivisionError", "limit": 3, "mode": "lexical"},
     "hit for 'ZeroDivisionError'"),
    ("list_sessions", {"limit": 2, "providers": ["claude-code"]}, "| cc-"),
    ("read_session", {"session": "cc-11111111", "budget": 600}, "next page: read_session"),
    ("files_touched", {"path": "app.py"}, "/tmp/demo/app.py"),
    ("usage", {"by": "monthly", "providers": ["codex"]}, "| **total** |"),
]
INVALID: list[tuple[str, dict[str, Any], str]] = [  # (tool, arguments, what the error says)
    ("search", {"query": "x", "limit": 0}, "limit 0: from 1 to 50"),
    ("search", {"limit": 3}, "query"),  # missing: the SDK's validation names it
    ("search", {"query": "x", "mode": "fuzzy"}, "mode: expected one of lexical"),
    ("list_sessions", {"since": "someday"}, "--since 'someday'"),
    # said to a model: which tool to call next, not a command for a person (issue #70)
    ("read_session", {"session": "zz-nothing"}, "no session matches 'zz-nothing': call"
     " list_sessions"),
    ("read_session", {"session": "cc-11111111", "budget": "lots"}, "budget"),
    ("files_touched", {"path": "x", "providers": ["vim"]}, "vim"),
    ("usage", {"by": "hourly"}, "usage 'hourly'"),
]


def stdio(store: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tracehouse.cli.app", "mcp", "--store", store]
    )


def converse(server: StdioServerParameters | AbstractAsyncContextManager[Any]) -> dict[str, Any]:
    """{"tools": names, "instructions": …, "valid"/"invalid": [(tool, is_error, text)]}."""

    async def run() -> dict[str, Any]:
        async with Client(server) as client:  # type: ignore[arg-type]
            listed = await client.list_tools()
            answers: dict[str, Any] = {
                "tools": {t.name for t in listed.tools},
                "read_only": all(
                    t.annotations is not None and t.annotations.read_only_hint for t in listed.tools
                ),
                "valid": [],
                "invalid": [],
            }
            for kind, calls in (("valid", VALID), ("invalid", INVALID)):
                for name, args, _ in calls:
                    result = await client.call_tool(name, args)
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    answers[kind].append((name, result.is_error, text))
            return answers

    return anyio.run(run)


def check(answers: dict[str, Any]) -> None:
    assert answers["tools"] == TOOLS and answers["read_only"]
    for (name, is_error, text), (_, _, expected) in zip(answers["valid"], VALID, strict=True):
        assert not is_error and expected in text, (name, text)
    for (name, is_error, text), (_, _, expected) in zip(answers["invalid"], INVALID, strict=True):
        assert is_error and expected in text, (name, text)
