"""Claude Code: its native build, `claude -p`, resumed by `--resume`."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.agents.agent import (
    MARKER,
    MISSING,
    NOTE_TEXT,
    NOTES,
    Agent,
    base_env,
    platform_name,
)
from conformance.scenario import TASK
from conformance.servers.anthropic import Anthropic
from conformance.servers.base import Call


def _claude_binary(modules: Path) -> Path:
    # The platform package's native program: the wrapper's `bin` is a placeholder that an
    # install script replaces, and no install script runs.
    return modules / "@anthropic-ai" / f"claude-code-{platform_name()}" / "claude"


def _claude_setup(home: Path, url: str) -> dict[str, str]:
    return {**base_env(home), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}  # fmt: skip


_CLAUDE_FLAGS = ["--model", "claude-sonnet-4-5", "--output-format", "json",
                 "--allowedTools", "Bash,Write,Read,Agent"]  # fmt: skip


def _claude_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    task = {"description": "Check the notes", "prompt": TASK, "subagent_type": "general-purpose",
            "run_in_background": False}  # fmt: skip
    return (
        Call("Bash", {"command": f"echo {MARKER}", "description": "Print the marker"}),
        Call("Write", {"file_path": notes, "content": NOTE_TEXT}),
        Call("Read", {"file_path": notes}),
        Call("Bash", {"command": MISSING, "description": "List a missing path"}),
        Call("Agent", task),
    )


CLAUDE_CODE = Agent(
    name="claude-code",
    package="@anthropic-ai/claude-code",
    dialect=Anthropic,
    prefix="",
    model="claude-sonnet-4-5",
    binary=_claude_binary,
    setup=_claude_setup,
    first=lambda program, prompt: [str(program), "-p", prompt, *_CLAUDE_FLAGS],
    resume=lambda program, sid, prompt: [
        str(program),
        "--resume",
        sid,
        "-p",
        prompt,
        *_CLAUDE_FLAGS,
    ],
    session_id=lambda home, stdout: str(json.loads(stdout)["session_id"]),
    steps=_claude_steps,
)
