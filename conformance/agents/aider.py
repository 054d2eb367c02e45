"""Aider (PyPI `aider-chat`): it edits by the blocks its model's answer writes, not by tool
calls, keeps its history in the directory it runs in, and logs token counts rounded. Each
launch is a session of its own (`--restore-chat-history` only sends the old messages again)."""

from __future__ import annotations

import re
from pathlib import Path

import xxhash

from conformance.agents.agent import NOTE_TEXT, NOTES, Agent, base_env
from conformance.scenario import ANSWERED
from conformance.servers.base import Call
from conformance.servers.chat import Chat

_STARTED = re.compile(r"^# aider chat started at (\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)", re.M)


def _aider_setup(home: Path, url: str) -> dict[str, str]:
    return {**base_env(home), "OPENAI_API_BASE": url, "OPENAI_API_KEY": "sk-scripted",
            "AIDER_CHECK_UPDATE": "false", "AIDER_ANALYTICS_DISABLE": "true"}  # fmt: skip


# Streamed, Aider asks for no usage and logs its own tokenizer's estimate: whole answers carry
# the model's counts.
_AIDER_FLAGS = ["--model", "openai/scripted-model", "--no-git", "--yes-always", "--no-pretty",
                "--no-stream", "--map-tokens", "0", "--no-auto-lint", "--no-check-update",
                "--analytics-disable", "--no-show-model-warnings", "--no-fancy-input",
                "--edit-format", "diff"]  # fmt: skip


def _aider_session(home: Path, stdout: str) -> str:
    """The launch's id as tracehouse names it: its start as written, and the project dir's
    hash (parsers/aider)."""
    work = home / "work"
    stamp = _STARTED.findall((work / ".aider.chat.history.md").read_text(encoding="utf-8"))[-1]
    return f"{''.join(stamp[:3])}T{''.join(stamp[3:])}-{xxhash.xxh32_hexdigest(str(work).encode())}"


def _aider_steps(work: Path) -> tuple[Call | None, ...]:
    return (None, Call("apply_edit", {"path": NOTES}), ANSWERED)


def _edit_block(call: Call) -> str:
    """A SEARCH/REPLACE block that creates the file (an empty SEARCH)."""
    body = NOTE_TEXT.rstrip("\n")
    return f"{call.args['path']}\n```\n<<<<<<< SEARCH\n=======\n{body}\n>>>>>>> REPLACE\n```"


def aider_rounds(count: int) -> int:
    """A count as Aider prints it (`utils.format_tokens`: 1.1k, 12k), read back."""
    if count < 1000:
        return count
    if count < 10000:
        return round(float(f"{count / 1000:.1f}") * 1000)
    return round(count / 1000) * 1000


AIDER = Agent(
    name="aider",
    package="aider-chat",
    dialect=Chat,
    prefix="/v1",
    model="scripted-model",
    binary=lambda venv: venv / "bin" / "aider",
    setup=_aider_setup,
    first=lambda program, prompt: [str(program), *_AIDER_FLAGS, "--message", prompt],
    resume=lambda program, sid, prompt: [str(program), *_AIDER_FLAGS, "--message", prompt],
    session_id=_aider_session,
    steps=_aider_steps,
    resumes=False,
    registry="pypi",
    python="3.11",
    written=_edit_block,
    rounds=aider_rounds,
    # no reasoning count, and no cache part for an OpenAI-compatible provider
    unlogged=frozenset({"cached_input_tokens", "cache_write_tokens", "reasoning_tokens"}),
    logged_model="openai/scripted-model",  # litellm's route to the API's `scripted-model`
    logs_seconds=True,
)
