"""Cline CLI 3: its linux build, one session per prompt."""

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
from conformance.servers.base import Call
from conformance.servers.chat import Chat


def _cline_setup(home: Path, url: str) -> dict[str, str]:
    # what `cline auth -p openai -k KEY -m MODEL -b URL` writes
    providers = home / ".cline" / "data" / "settings" / "providers.json"
    providers.parent.mkdir(parents=True, exist_ok=True)
    settings = {"provider": "openai-compatible", "apiKey": "sk-scripted",
                "model": "scripted-model", "baseUrl": url}  # fmt: skip
    providers.write_text(json.dumps({"version": 1, "lastUsedProvider": "openai-compatible",
                                     "modes": {}, "providers": {"openai-compatible": {
                                         "settings": settings, "tokenSource": "manual",
                                         "updatedAt": "2026-01-01T00:00:00.000Z"}}}))  # fmt: skip
    return base_env(home)


def _cline_session(home: Path, stdout: str) -> str:
    return max((home / ".cline" / "data" / "sessions").iterdir(), key=lambda f: f.name).name


def _cline_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    return (
        Call("run_commands", {"commands": [f"echo {MARKER}"]}),
        Call("editor", {"path": notes, "new_text": NOTE_TEXT}),
        Call("read_files", {"files": [{"path": notes}]}),
        Call("run_commands", {"commands": [MISSING]}),
        Call("spawn_agent", {"systemPrompt": "You check files.", "task": TASK}),
    )


CLINE = Agent(
    name="cline",
    package="cline",
    dialect=Chat,
    prefix="/v1",
    model="scripted-model",
    binary=lambda modules: modules / f"@cline/cli-{platform_name()}" / "bin" / "cline",
    setup=_cline_setup,
    first=lambda program, prompt: [str(program), "--json", prompt],
    resume=lambda program, sid, prompt: [str(program), "--json", "--id", sid, prompt],
    session_id=_cline_session,
    steps=_cline_steps,
    # `--id` resumes in the terminal UI only, and `--acp` serves only a Cline account's models
    resumes=False,
    # pinned by its linux-x64 build, the program itself: the wrapper names builds the registry
    # lacks
    pinned_as=f"@cline/cli-{platform_name()}",
)
