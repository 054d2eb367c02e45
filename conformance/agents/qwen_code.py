"""Qwen Code: Gemini CLI's fork, on Chat Completions."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.agents.agent import Agent, base_env
from conformance.agents.gemini_cli import gemini_steps
from conformance.scenario import TASK
from conformance.servers.base import Call
from conformance.servers.chat import Chat


def _qwen_setup(home: Path, url: str) -> dict[str, str]:
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "openai"}},
                                    "telemetry": {"enabled": False},
                                    "general": {"disableAutoUpdate": True}}))  # fmt: skip
    return {**base_env(home), "OPENAI_API_KEY": "sk-scripted", "OPENAI_BASE_URL": url,
            "OPENAI_MODEL": "qwen3-coder-plus"}  # fmt: skip


_QWEN_FLAGS = ["--yolo", "--output-format", "json", "--auth-type", "openai"]


def _qwen_session(home: Path, stdout: str) -> str:
    chats = sorted((home / ".qwen" / "projects").glob("*/chats/*.jsonl"))
    return chats[-1].stem


def _qwen_steps(work: Path) -> tuple[Call, ...]:
    task = {"description": "Check the notes", "prompt": TASK, "subagent_type": "general-purpose",
            "run_in_background": False}  # fmt: skip
    return (*gemini_steps(work), Call("agent", task))


QWEN_CODE = Agent(
    name="qwen-code",
    package="@qwen-code/qwen-code",
    dialect=Chat,
    prefix="/v1",
    model="qwen3-coder-plus",
    binary=lambda modules: modules / "@qwen-code" / "qwen-code" / "cli-entry.js",
    setup=_qwen_setup,
    first=lambda program, prompt: ["node", str(program), prompt, *_QWEN_FLAGS],
    resume=lambda program, sid, prompt: [
        "node",
        str(program),
        "--resume",
        sid,
        prompt,
        *_QWEN_FLAGS,
    ],
    session_id=_qwen_session,
    steps=_qwen_steps,
)
