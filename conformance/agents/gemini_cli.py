"""Gemini CLI: its bundle under node, `gemini -p`, resumed by `--resume`."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.agents.agent import MARKER, MISSING, NOTE_TEXT, NOTES, Agent, base_env
from conformance.servers.base import Call
from conformance.servers.gemini import Gemini


def _gemini_setup(home: Path, url: str) -> dict[str, str]:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                    "telemetry": {"enabled": False},
                                    "general": {"disableAutoUpdate": True}}))  # fmt: skip
    return {**base_env(home), "GEMINI_API_KEY": "scripted", "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "1"}  # fmt: skip


_GEMINI_FLAGS = ["--yolo", "-m", "gemini-2.5-flash", "--output-format", "json"]


def _gemini_session(home: Path, stdout: str) -> str:
    chats = sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))
    header = chats[-1].read_text(encoding="utf-8").split("\n", 1)[0]
    return str(json.loads(header)["sessionId"])


def gemini_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    return (
        Call("run_shell_command", {"command": f"echo {MARKER}", "description": "Print it"}),
        Call("write_file", {"file_path": notes, "content": NOTE_TEXT}),
        Call("read_file", {"file_path": notes}),
        Call("run_shell_command", {"command": MISSING, "description": "List it"}),
    )


GEMINI_CLI = Agent(
    name="gemini-cli",
    package="@google/gemini-cli",
    dialect=Gemini,
    prefix="",
    model="gemini-2.5-flash",
    binary=lambda modules: modules / "@google" / "gemini-cli" / "bundle" / "gemini.js",
    setup=_gemini_setup,
    first=lambda program, prompt: ["node", str(program), "-p", prompt, *_GEMINI_FLAGS],
    resume=lambda program, sid, prompt: [
        "node",
        str(program),
        "--resume",
        sid,
        "-p",
        prompt,
        *_GEMINI_FLAGS,
    ],
    session_id=_gemini_session,
    steps=gemini_steps,
)
