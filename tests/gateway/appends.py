"""Lines a running Claude Code would append to the main session of `tests/data/claude/home`."""

from __future__ import annotations

from pathlib import Path

import orjson

DATA = Path(__file__).parents[1] / "data"
SESSION = "11111111-1111-4111-8111-111111111111"


def claude_line(kind: str, uuid: str, parent: str, second: int, message: dict) -> bytes:
    record = {
        "isSidechain": False, "userType": "external", "cwd": "/tmp/demo", "sessionId": SESSION,
        "version": "2.1.114", "gitBranch": "main", "type": kind, "uuid": uuid,
        "parentUuid": parent, "timestamp": f"2026-03-01T10:02:{second:02d}.000Z",
        "message": message,
    }  # fmt: skip
    if kind == "assistant":
        record["requestId"] = f"req_{uuid}"
    return orjson.dumps(record) + b"\n"


def append_a_turn(home: Path) -> None:
    """A new prompt whose parent came in the first push, a tool call and its result."""
    usage = {"input_tokens": 40, "output_tokens": 9}
    call = {"type": "tool_use", "id": "toolu_tail", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_tail", "content": "README.md"}
    answer = {"id": "msg_9", "type": "message", "role": "assistant",
              "model": "claude-opus-4-1", "content": [call], "usage": usage}  # fmt: skip
    lines = [
        claude_line("user", "u8", "u7", 1, {"role": "user", "content": "list the files"}),
        claude_line("assistant", "a9", "u8", 2, answer),
        claude_line("user", "u9", "a9", 3, {"role": "user", "content": [result]}),
    ]
    with main_file(home).open("ab") as out:
        out.writelines(lines)


def main_file(home: Path) -> Path:
    return home / ".claude" / "projects" / "-tmp-demo" / f"{SESSION}.jsonl"
