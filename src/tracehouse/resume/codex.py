"""A conversation written as a Codex rollout, where `codex resume ID` finds it.

Codex keeps a session in `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`: a
`session_meta` line, then the model's history as `response_item` lines (messages, function calls
and their outputs) beside `event_msg` lines for its own display; a resume sends the
`response_item` history back to the model. The rollout written is of the 0.118 shape, which
Codex still resumes. Its own session restored keeps its id; another agent's session becomes a
new one whose first message says where it came from, its shell commands `exec_command` calls,
every other call text the model can read.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path, PureWindowsPath
from typing import Any

from tracehouse.resume.calls import as_text, origin_note, shell_line
from tracehouse.resume.conversation import Call, Conversation, Step

CLI_VERSION = "0.118.0"  # the rollout shape written: one Codex 0.118 to 0.169 resumes
ORIGINATOR = "tracehouse_resume"


# How the calls of another agent's session are shown, in the note that opens it.
SHOWN = "Its shell commands are shown as exec_command calls"


def config_dir(home: Path, env: dict[str, str]) -> Path:
    given = env.get("CODEX_HOME", "").strip()
    return Path(given).expanduser() if given else home / ".codex"


def new_id(seed: str, at: str | None) -> str:
    """A UUID of version 7, as Codex names its sessions (time first, so they sort by it): the
    session's start, then bits of `seed`, so writing the same session again names the same
    file (which is then refused, never a second copy)."""
    ms = int(_moment(at).timestamp() * 1000)
    bits = int.from_bytes(hashlib.blake2b(seed.encode(), digest_size=10).digest(), "big")
    value = (ms << 80) | (0x7 << 76) | ((bits >> 62) & 0xFFF) << 64 | (0b10 << 62)
    return str(uuid.UUID(int=value | (bits & ((1 << 62) - 1))))


def transcript_path(config: Path, cwd: str, session_id: str, at: str | None = None) -> Path:
    """`sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`, at the session's start
    (or now)."""
    moment = _moment(at)
    day = config / "sessions" / f"{moment:%Y}" / f"{moment:%m}" / f"{moment:%d}"
    return day / f"rollout-{moment:%Y-%m-%dT%H-%M-%S}-{session_id}.jsonl"


_ROLLOUT = re.compile(
    r"rollout-(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})T\d{2}-\d{2}-\d{2}-(?P<id>[0-9a-fA-F-]{36})\.jsonl"
)


def restored_path(config: Path, session_id: str, stored: str) -> Path | None:
    """Where Codex's own session goes back: under the file name it was read from, when that is
    a rollout's name for this very session, in the `sessions/` day folder the name dates (Codex
    keys a rollout's lines by their place in the file, so back at its own path the file
    replaces what the ledger kept of it rather than standing beside it). Only the name is
    taken from the stored path, and only once it fits: the folder is rebuilt."""
    found = _ROLLOUT.fullmatch(PureWindowsPath(stored).name)
    if found is None or found["id"].lower() != session_id.lower():
        return None
    return config / "sessions" / found["y"] / found["m"] / found["d"] / found.group()


def holds(config: Path, cwd: str, session_id: str) -> bool:
    """Whether `codex resume ID` finds the session: a rollout of that id under `sessions/`
    (the id has Codex's shape: nothing in it is a pattern)."""
    return any(config.glob(f"sessions/*/*/*/rollout-*-{session_id}.jsonl"))


def command(session_id: str) -> list[str]:
    return ["codex", "resume", session_id]


def lines(
    conv: Conversation, session_id: str, cwd: str, *, restore: bool
) -> Iterator[dict[str, Any]]:
    s = conv.session
    own = restore and s["source_provider"] == "codex"
    start = s.get("created_at") or _iso(datetime.now(UTC))
    meta = {"id": session_id, "timestamp": start, "cwd": cwd, "originator": ORIGINATOR,
            "cli_version": CLI_VERSION, "source": "cli"}  # fmt: skip
    if not own:
        meta["continued_from"] = {"provider": s["source_provider"], "label": s["label"],
                                  "sessionId": s["source_session_id"],
                                  "workspace": s.get("workspace_path")}  # fmt: skip
    yield {"timestamp": start, "type": "session_meta", "payload": meta}
    steps = list(conv.steps if own else conv.spoken)
    if not own:
        steps.insert(0, Step("context", origin_note(conv, "Codex", SHOWN), start, None))
    turns = _Turns(conv, cwd) if own else None
    for n, step in enumerate(steps):
        at = step.at or start
        if turns is not None:
            yield from turns.enter(step, at)
        yield from _records(step, n, at, own)
    if turns is not None:
        yield from turns.close(start)


class _Turns:
    """A restored rollout keeps its turns and what each spent: `task_started` and
    `turn_context` (the model) where a turn begins, its tokens as a `token_count` where it
    ends. The ledger keeps Codex's counts as Codex reports them: input with the cache in it."""

    def __init__(self, conv: Conversation, cwd: str) -> None:
        self.conv, self.cwd = conv, cwd
        self.current: str | None = None
        self.last_at: str | None = None
        self.total = [0, 0, 0, 0, 0]  # input, cached, output, reasoning, total

    def enter(self, step: Step, at: str) -> Iterator[dict[str, Any]]:
        if step.turn_id and step.turn_id != self.current and step.turn_id in self.conv.turns:
            yield from self.close(at)
            self.current = step.turn_id
            turn = self.conv.turns[step.turn_id]
            turn_id = turn.get("source_turn_id") or step.turn_id
            yield {"timestamp": at, "type": "event_msg",
                   "payload": {"type": "task_started", "turn_id": turn_id}}  # fmt: skip
            context: dict[str, Any] = {"turn_id": turn_id, "cwd": self.cwd}
            if turn.get("model"):
                context["model"] = turn["model"]
            yield {"timestamp": at, "type": "turn_context", "payload": context}
        self.last_at = at

    def close(self, at: str) -> Iterator[dict[str, Any]]:
        if self.current is None:
            return
        turn = self.conv.turns[self.current]
        self.current = None
        counts = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")
        if all(turn.get(k) is None for k in counts):
            return  # none recorded: none written
        spent = [int(turn.get(k) or 0) for k in counts]
        spent.append(spent[0] + spent[2])
        self.total = [a + b for a, b in zip(self.total, spent, strict=True)]
        names = ("input_tokens", "cached_input_tokens", "output_tokens",
                 "reasoning_output_tokens", "total_tokens")  # fmt: skip
        info = {"total_token_usage": dict(zip(names, self.total, strict=True)),
                "last_token_usage": dict(zip(names, spent, strict=True))}  # fmt: skip
        yield {"timestamp": self.last_at or at, "type": "event_msg",
               "payload": {"type": "token_count", "info": info}}  # fmt: skip


def _records(step: Step, n: int, at: str, own: bool) -> Iterator[dict[str, Any]]:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        if own and step.source_id and payload.get("type") == "message":
            payload["tracehouse_key"] = step.source_id  # its key when it was first read
        return {"timestamp": at, "type": "response_item", "payload": payload}

    def event(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": at, "type": "event_msg", "payload": payload}

    if step.role == "notice":
        return  # the agent's own line: Codex keeps its notices as events of its own kinds
    if step.role == "context":
        yield item({"type": "message", "role": "developer",
                    "content": [{"type": "input_text", "text": step.text}]})  # fmt: skip
        return
    if step.role == "user":
        yield item({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": step.text}]})  # fmt: skip
        yield event({"type": "user_message", "message": step.text, "images": []})
        return
    text = step.text
    calls: list[tuple[Call, str, str, dict[str, Any]]] = []
    for i, call in enumerate(step.calls):
        call_id = call.source_id if own and call.source_id else f"call_th{n:05d}{i:03d}"
        shaped = (call.name, call.params) if own else as_codex(call)
        if shaped is None:
            text += ("\n\n" if text else "") + as_text(call)
        else:
            calls.append((call, call_id, *shaped))
    if text:
        yield item({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": text}]})  # fmt: skip
        yield event({"type": "agent_message", "message": text})
    for call, call_id, name, params in calls:
        yield item({"type": "function_call", "name": name, "arguments": json.dumps(params),
                    "call_id": call_id})  # fmt: skip
        if call.result is not None or not own:  # a call that returned nothing: no output
            yield item({"type": "function_call_output", "call_id": call_id,
                        "output": call.result or ""})  # fmt: skip
        if call.exit_code is not None:  # how the command ended, where the agent said
            yield event({"type": "exec_command_end", "call_id": call_id,
                         "exit_code": call.exit_code})  # fmt: skip


def as_codex(call: Call) -> tuple[str, dict[str, Any]] | None:
    """Another agent's shell command as Codex's `exec_command`, or None."""
    line = shell_line(call)
    return ("exec_command", {"cmd": line}) if line is not None else None


def _moment(at: str | None) -> datetime:
    if at:
        try:
            return datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone(UTC)
        except ValueError:
            pass
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
