"""GitHub Copilot CLI: offline against a custom provider (BYOK)."""

from __future__ import annotations

from pathlib import Path

from conformance.agents.agent import MARKER, MISSING, NOTE_TEXT, NOTES, Agent, base_env
from conformance.servers.base import Call
from conformance.servers.chat import Chat


def _copilot_setup(home: Path, url: str) -> dict[str, str]:
    return {**base_env(home), "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": url,
            "COPILOT_PROVIDER_API_KEY": "sk-scripted", "COPILOT_MODEL": "gpt-5.5",
            "COPILOT_AUTO_UPDATE": "false", "COPILOT_ALLOW_ALL": "true"}  # fmt: skip


def _copilot_session(home: Path, stdout: str) -> str:
    (state,) = [p for p in (home / ".copilot" / "session-state").iterdir() if p.is_dir()
                and not p.name.startswith(".")]  # fmt: skip
    return state.name


def _copilot_steps(work: Path) -> tuple[Call, ...]:
    notes = work / NOTES
    return (
        Call("bash", {"command": f"echo {MARKER}", "description": "Print the marker"}),
        Call(
            "bash",
            {
                "command": f"printf '{NOTE_TEXT.strip()}\\n' > {notes}",
                "description": "Write the notes",
            },
        ),
        Call("view", {"path": str(notes)}),
        Call("bash", {"command": MISSING, "description": "List a missing path"}),
    )


_COPILOT_FLAGS = ["--allow-all-tools", "--no-auto-update"]

# Copilot CLI runs offline against a custom provider (BYOK) speaking Chat Completions, and its
# events.jsonl is compared with the model's record like every other agent's.
COPILOT = Agent(
    name="copilot",
    package="@github/copilot",
    dialect=Chat,
    prefix="/v1",
    model="gpt-5.5",
    binary=lambda modules: modules / "@github" / "copilot" / "npm-loader.js",
    setup=_copilot_setup,
    first=lambda program, prompt: ["node", str(program), "-p", prompt, *_COPILOT_FLAGS],
    resume=lambda program, sid, prompt: [
        "node",
        str(program),
        f"--resume={sid}",
        "-p",
        prompt,
        *_COPILOT_FLAGS,
    ],
    session_id=_copilot_session,
    steps=_copilot_steps,
)
