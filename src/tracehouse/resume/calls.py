"""What every target's writer shares: shell commands recognised across agents, a call no
target has a shape for as text the model can read, and the one way a file is written."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

from tracehouse.resume.conversation import Call, Conversation

# Tool names under which the agents run a shell command.
SHELLS = frozenset({"bash", "shell", "shell_command", "exec_command", "run_shell_command",
                    "run_terminal_cmd", "run_terminal_command_v2", "terminal"})  # fmt: skip


def shell_line(call: Call) -> str | None:
    """The command line of a shell call, whatever agent made it; None for another call."""
    name = call.name.lower()
    if name not in SHELLS and not name.endswith("shell"):
        return None
    command = call.params.get("command", call.params.get("cmd"))
    if isinstance(command, str):
        return command
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        if len(command) == 3 and command[1] in ("-lc", "-c"):  # Codex: ["bash", "-lc", "…"]
            return str(command[2])
        return shlex.join(command)
    return None


def as_text(call: Call) -> str:
    params = json.dumps(call.params, ensure_ascii=False)
    outcome = "failed" if call.failed else "returned"
    result = f"\n{outcome}:\n{call.result}" if call.result else ""
    return f"[{call.name} {params}]{result}"


def write_new(path: Path, records: list[dict[str, Any]]) -> None:
    """The session file, one JSON line a record: a file that did not exist (never one
    replaced or appended to), that only its owner may read, as the agents make their own."""
    import orjson

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        for record in records:
            out.write(orjson.dumps(record) + b"\n")


def origin_note(conv: Conversation, agent: str, shown: str) -> str:
    """The first message of a session made from another agent's: where it comes from, and
    how its calls are shown (`shown`)."""
    s = conv.session
    where = f" in {s['workspace_path']}" if s.get("workspace_path") else ""
    return (
        f"This conversation continues {s['source_provider']} session {s['label']}"
        f" ({s['source_session_id']}{where}), written for {agent} by `tracehouse resume`."
        f" {shown}; its other tool calls as text."
    )
