"""Pi: a provider of its own in models.json, on Anthropic Messages."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.agents.agent import MARKER, MISSING, NOTE_TEXT, NOTES, Agent, base_env
from conformance.servers.anthropic import Anthropic
from conformance.servers.base import Call


def _pi_setup(home: Path, url: str) -> dict[str, str]:
    models = home / ".pi" / "agent" / "models.json"
    models.parent.mkdir(parents=True, exist_ok=True)
    model = {"id": "claude-sonnet-4-5", "name": "Scripted", "reasoning": False,
             "input": ["text"], "contextWindow": 200000, "maxTokens": 8192,
             "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}  # fmt: skip
    models.write_text(json.dumps({"providers": {"scripted": {
        "baseUrl": url, "api": "anthropic-messages", "apiKey": "sk-ant-scripted",
        "models": [model]}}}))  # fmt: skip
    return {**base_env(home), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1"}


_PI_FLAGS = ["--provider", "scripted", "--model", "claude-sonnet-4-5", "--mode", "json"]


def _pi_session(home: Path, stdout: str) -> str:
    (log,) = (home / ".pi" / "agent" / "sessions").glob("*/*.jsonl")
    return str(json.loads(log.read_text().split("\n", 1)[0])["id"])


def _pi_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    return (
        Call("bash", {"command": f"echo {MARKER}"}),
        Call("write", {"path": notes, "content": NOTE_TEXT}),
        Call("read", {"path": notes}),
        Call("bash", {"command": MISSING}),
    )


PI = Agent(
    name="pi",
    package="@mariozechner/pi-coding-agent",
    dialect=Anthropic,
    prefix="",
    model="claude-sonnet-4-5",
    binary=lambda modules: modules / "@mariozechner" / "pi-coding-agent" / "dist" / "cli.js",
    setup=_pi_setup,
    first=lambda program, prompt: ["node", str(program), "-p", prompt, *_PI_FLAGS],
    resume=lambda program, sid, prompt: [
        "node",
        str(program),
        "--session",
        sid,
        "-p",
        prompt,
        *_PI_FLAGS,
    ],
    session_id=_pi_session,
    steps=_pi_steps,
)
