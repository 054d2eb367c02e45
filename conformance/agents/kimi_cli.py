"""Kimi CLI: its last PyPI release still ships the original CLI (`python -m kimi_cli.cli`),
in print mode, on an `openai_legacy` (Chat Completions) provider in `~/.kimi/config.toml`."""

from __future__ import annotations

from pathlib import Path

from conformance.agents.agent import MARKER, MISSING, NOTE_TEXT, NOTES, Agent, base_env
from conformance.scenario import TASK
from conformance.servers.base import Call
from conformance.servers.chat import Chat


def _kimi_setup(home: Path, url: str) -> dict[str, str]:
    config = home / ".kimi" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        'default_model = "scripted"\n\n'
        '[providers.scripted]\ntype = "openai_legacy"\n'
        f'base_url = "{url}"\napi_key = "sk-scripted"\n\n'
        '[models.scripted]\nprovider = "scripted"\nmodel = "kimi-k2"\n'
        "max_context_size = 262144\n"
    )
    return base_env(home)


_KIMI_FLAGS = ["--print", "--yolo"]


def _kimi_session(home: Path, stdout: str) -> str:
    (session,) = [p for p in (home / ".kimi" / "sessions").glob("*/*") if p.is_dir()]
    return session.name


def _kimi_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    task = {"description": "Check the notes", "prompt": TASK, "subagent_type": "coder",
            "run_in_background": False}  # fmt: skip
    return (
        Call("Shell", {"command": f"echo {MARKER}"}),
        Call("WriteFile", {"path": notes, "content": NOTE_TEXT}),
        Call("ReadFile", {"path": notes}),
        Call("Shell", {"command": MISSING}),
        Call("Agent", task),
    )


KIMI_CLI = Agent(
    name="kimi-cli",
    package="kimi-cli",
    dialect=Chat,
    prefix="/v1",
    model="kimi-k2",
    binary=lambda venv: venv / "bin" / "python",
    setup=_kimi_setup,
    first=lambda program, prompt: [str(program), "-m", "kimi_cli.cli", *_KIMI_FLAGS, "-p", prompt],
    resume=lambda program, sid, prompt: [
        str(program),
        "-m",
        "kimi_cli.cli",
        *_KIMI_FLAGS,
        "--session",
        sid,
        "-p",
        prompt,
    ],
    session_id=_kimi_session,
    steps=_kimi_steps,
    registry="pypi",
    # 3.12.1 fails at start; its pins are compiled for 3.13
    python="3.13",
    # neither the wire log nor the context names it (config.toml does, as it is today)
    logs_model=False,
)
