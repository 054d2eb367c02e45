"""Codex CLI: its native build, `codex exec`, a provider of its own in config.toml."""

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
from conformance.servers.responses import Responses

_CODEX_TARGETS = {"linux-x64": "x86_64-unknown-linux-musl",
                  "linux-arm64": "aarch64-unknown-linux-musl"}  # fmt: skip


def _codex_binary(modules: Path) -> Path:
    target = _CODEX_TARGETS.get(platform_name(), "")
    return modules / "@openai" / f"codex-{platform_name()}" / "vendor" / target / "bin" / "codex"


def _codex_setup(home: Path, url: str) -> dict[str, str]:
    config = home / ".codex"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "scripted"\n\n'
        '[model_providers.scripted]\nname = "scripted"\n'
        f'base_url = "{url}"\nenv_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n'
    )
    return {**base_env(home), "CODEX_HOME": str(config), "SCRIPTED_API_KEY": "sk-scripted"}


_CODEX_FLAGS = ["--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox"]


def _codex_session(home: Path, stdout: str) -> str:
    for line in stdout.splitlines():
        if '"thread_id"' in line:
            return str(json.loads(line)["thread_id"])
    raise ValueError("codex exec --json named no thread")


def _codex_steps(work: Path) -> tuple[Call, ...]:
    patch = f"*** Begin Patch\n*** Add File: {NOTES}\n+{NOTE_TEXT.rstrip()}\n*** End Patch\n"
    return (
        Call("exec_command", {"cmd": f"echo {MARKER}"}),
        Call("apply_patch", {"input": patch}),
        Call("exec_command", {"cmd": f"cat {NOTES}"}),
        Call("exec_command", {"cmd": MISSING}),
    )


CODEX = Agent(
    name="codex",
    package="@openai/codex",
    dialect=Responses,
    prefix="/v1",
    model="gpt-5.5",
    binary=_codex_binary,
    setup=_codex_setup,
    first=lambda program, prompt: [str(program), "exec", *_CODEX_FLAGS, prompt],
    resume=lambda program, sid, prompt: [
        str(program),
        "exec",
        *_CODEX_FLAGS,
        "resume",
        sid,
        prompt,
    ],
    session_id=_codex_session,
    steps=_codex_steps,
)
