"""OpenCode: its linux build, `opencode run`, an openai-compatible provider."""

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
from conformance.servers.base import Call
from conformance.servers.chat import Chat


def _opencode_setup(home: Path, url: str) -> dict[str, str]:
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                "options": {"baseURL": url, "apiKey": "sk-scripted"},
                "models": {"scripted-model": {"name": "Scripted model"}}}  # fmt: skip
    config.write_text(json.dumps({"$schema": "https://opencode.ai/config.json",
                                  "autoupdate": False, "share": "disabled",
                                  "provider": {"scripted": provider},
                                  "model": "scripted/scripted-model"}))  # fmt: skip
    return {**base_env(home), "OPENCODE_DISABLE_AUTOUPDATE": "1"}


def _opencode_session(home: Path, stdout: str) -> str:
    for line in stdout.splitlines():
        if '"sessionID"' in line:
            return str(json.loads(line)["sessionID"])
    raise ValueError("opencode run --format json named no session")


def _opencode_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    return (
        Call("bash", {"command": f"echo {MARKER}", "description": "Print the marker"}),
        Call("write", {"filePath": notes, "content": NOTE_TEXT}),
        Call("read", {"filePath": notes}),
        Call("bash", {"command": MISSING, "description": "List a missing path"}),
    )


# OpenCode joins its message words with spaces, quoting any word that holds one: a prompt
# given word by word is sent as typed.
OPENCODE = Agent(
    name="opencode",
    package="opencode-ai",
    dialect=Chat,
    prefix="/v1",
    model="scripted-model",
    binary=lambda modules: modules / f"opencode-{platform_name()}" / "bin" / "opencode",
    setup=_opencode_setup,
    first=lambda program, prompt: [str(program), "run", "--format", "json", *prompt.split()],
    resume=lambda program, sid, prompt: [
        str(program),
        "run",
        "--format",
        "json",
        "--session",
        sid,
        *prompt.split(),
    ],
    session_id=_opencode_session,
    steps=_opencode_steps,
    # pinned by its linux-x64 build: the registry lacks some of the other builds the wrapper
    # names, and `npm ci` refuses a lock without them
    pinned_as=f"opencode-{platform_name()}",
)
