"""A conversation written as a Claude Code transcript, where `claude --resume ID` finds it.

Claude Code keeps a session in `<config dir>/projects/<cwd, every character but letters and
digits as '-'>/<session id>.jsonl`, a chain of `user` and `assistant` lines (`parentUuid` →
`uuid`); a resume sends the chain back to the model. Its own session restored keeps its ids,
so importing the file again gives the session it was (`sessions.source_session_id` and the
messages' source ids); another agent's session becomes a new one, its shell commands `Bash`
calls, its reads, writes and edits `Read`, `Write` and `Edit` calls where their parameters
say so, every other call text the model can read.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tracehouse.model.tokens import fresh_input
from tracehouse.resume.calls import as_text, origin_note, shell_line
from tracehouse.resume.conversation import Call, Conversation, Step

# The transcript version written: one whose lines every Claude Code since 2.0 resumes.
VERSION = "2.1.114"
NAMESPACE = uuid.UUID("5f0c6a4e-0d1f-4c25-9a57-7a1a9c0f2c11")  # line uuids of restored lines
ORIGIN = "tracehouse-origin"  # the line saying where a session came from (Claude skips it)


# How the calls of another agent's session are shown, in the note that opens it.
SHOWN = (
    "Its shell commands, reads, writes and edits are shown as Claude Code's Bash, Read, Write"
    " and Edit calls"
)


def config_dir(home: Path, env: dict[str, str]) -> Path:
    """Where Claude Code keeps its data: `$CLAUDE_CONFIG_DIR` (its first entry), else
    `~/.claude`."""
    given = env.get("CLAUDE_CONFIG_DIR", "").split(",")[0].strip()
    return Path(given).expanduser() if given else home / ".claude"


def project_dir(cwd: str) -> str:
    """Claude Code's folder name for a workspace: every character but ASCII letters and digits
    as `-`; past 200 characters, the first 200 and a base-36 hash of the whole path (as its
    CLI does, so a long workspace neither fails with `File name too long` nor lands beside the
    folder Claude Code reads)."""
    name = re.sub(r"[^A-Za-z0-9]", "-", cwd)
    if len(name) <= _LONGEST_NAME:
        return name
    return f"{name[:_LONGEST_NAME]}-{_base36(abs(_java_hash(cwd)))}"


_LONGEST_NAME = 200


def _java_hash(text: str) -> int:
    """JavaScript's `(h << 5) - h + charCodeAt(i) | 0` over the UTF-16 code units."""
    value = 0
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        value = (value * 31 + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def transcript_path(config: Path, cwd: str, session_id: str, at: str | None = None) -> Path:
    return config / "projects" / project_dir(cwd) / f"{session_id}.jsonl"


def holds(config: Path, cwd: str, session_id: str) -> bool:
    """Whether `claude --resume ID`, run in `cwd`, finds the session: its project folder's."""
    return transcript_path(config, cwd, session_id).is_file()


def command(session_id: str) -> list[str]:
    return ["claude", "--resume", session_id]


def lines(
    conv: Conversation, session_id: str, cwd: str, *, restore: bool
) -> Iterator[dict[str, Any]]:
    """The transcript's records, in order. `restore`: Claude Code's own session, its ids, its
    notices and what each turn spent kept; otherwise a new session whose first line names where
    it came from and whose first message tells the model."""
    s = conv.session
    own = restore and s["source_provider"] == "claude-code"
    base = {"sessionId": session_id, "cwd": cwd, "version": VERSION, "isSidechain": False,
            "userType": "external"}  # fmt: skip
    if s.get("git_branch"):
        base["gitBranch"] = s["git_branch"]
    steps = list(conv.steps if own else conv.spoken)
    if not own:
        origin = {"provider": s["source_provider"], "sessionId": s["source_session_id"],
                  "label": s["label"], "workspace": s.get("workspace_path")}  # fmt: skip
        yield {"type": ORIGIN, "sessionId": session_id, "continuedFrom": origin}
        steps.insert(
            0, Step("context", origin_note(conv, "Claude Code", SHOWN), s.get("created_at"), None)
        )
    title = s.get("title") or s.get("task_description")
    if title:
        yield {"type": "custom-title", "customTitle": title, "sessionId": session_id}
    writer = _Writer(conv, base, session_id, own)
    spent = _usage_by_step(conv) if own else {}
    parent: str | None = None
    for n, step in enumerate(steps):
        for record in writer.records(step, n, spent.get(id(step))):
            record["parentUuid"] = parent
            parent = record["uuid"]
            yield record


def _usage_by_step(conv: Conversation) -> dict[int, dict[str, Any]]:
    """A restored session keeps what its turns spent: each turn's tokens as the usage of its
    first answer (the parser sums a turn's answers, so the turn's sum comes back the same).
    Anthropic's `input_tokens` leave out the cache the ledger's input holds."""
    spent: dict[int, dict[str, Any]] = {}
    seen: set[str] = set()
    counts = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens")
    for step in conv.steps:
        turn = conv.turns.get(step.turn_id or "")
        if step.role != "assistant" or turn is None or step.turn_id in seen:
            continue
        seen.add(str(step.turn_id))
        if all(turn.get(k) is None for k in counts):
            continue  # none recorded: none written
        spent[id(step)] = {
            "input_tokens": fresh_input(turn) or 0,
            "output_tokens": turn.get("output_tokens") or 0,
            "cache_read_input_tokens": turn.get("cached_input_tokens") or 0,
            "cache_creation_input_tokens": turn.get("cache_write_tokens") or 0,
        }
    return spent


class _Writer:
    """Records for one step at a time; a restore keeps the session's own ids."""

    def __init__(self, conv: Conversation, base: dict[str, Any], session_id: str, own: bool):
        self.conv, self.base, self.session_id, self.own = conv, base, session_id, own

    def records(self, step: Step, n: int, usage: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
        at = step.at or self.conv.session.get("created_at") or "1970-01-01T00:00:00.000Z"
        head = {**self.base, "timestamp": at}
        if step.role == "notice" and step.speaker == "assistant":  # Claude Code's own answer
            step = Step("assistant", step.text, step.at, step.source_id, "<synthetic>")
        elif step.role == "notice" and step.speaker == "user":  # an interruption, a command
            step = Step("user", step.text, step.at, step.source_id)  # its text says which
        elif step.role == "notice":  # the agent's own line: shown to the user, never sent
            yield {**head, "type": "system", "subtype": "informational", "level": "info",
                   "uuid": self._id(step, n, "notice"), "content": step.text}  # fmt: skip
            return
        if step.role in ("user", "context"):
            record = {**head, "type": "user", "uuid": self._id(step, n, "prompt"),
                      "message": {"role": "user", "content": step.text}}  # fmt: skip
            if step.role == "context":
                record["isMeta"] = True  # what the model was given, not what was typed
            yield record
            return
        yield from self._answer(step, n, head, usage)

    def _answer(
        self, step: Step, n: int, head: dict[str, Any], usage: dict[str, Any] | None
    ) -> Iterator[dict[str, Any]]:
        text = step.text
        calls: list[tuple[Call, str, str, dict[str, Any]]] = []
        for i, call in enumerate(step.calls):
            call_id = call.source_id if self.own and call.source_id else f"toolu_th{n:05d}{i:03d}"
            shaped = (call.name, call.params) if self.own else as_claude(call)
            if shaped is None:
                text += ("\n\n" if text else "") + as_text(call)
            else:
                calls.append((call, call_id, *shaped))
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks += [{"type": "tool_use", "id": call_id, "name": name, "input": params}
                   for _, call_id, name, params in calls]  # fmt: skip
        if not blocks:
            return
        source = step.source_id or ""
        message_id = source[4:] if self.own and source.startswith("msg:") else (
            f"msg_th{uuid.uuid5(NAMESPACE, f'{self.session_id}/{n}').hex[:20]}")  # fmt: skip
        message: dict[str, Any] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": step.model or self.conv.session.get("model") or "unknown",
            "content": blocks,
            "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
        }
        if usage is not None:  # else none: nothing was spent writing it
            message["usage"] = usage
        yield {**head, "type": "assistant", "uuid": self._id(step, n, "answer"),
               "requestId": f"req_th{message_id[-20:]}", "message": message}  # fmt: skip
        for k, (call, call_id, _name, _params) in enumerate(calls):
            result = {"type": "tool_result", "tool_use_id": call_id,
                      "content": call.result or "", "is_error": call.failed}  # fmt: skip
            yield {**head, "type": "user", "uuid": self._id(step, n, f"result{k}"),
                   "message": {"role": "user", "content": [result]}}  # fmt: skip

    def _id(self, step: Step, n: int, kind: str) -> str:
        """A line's uuid: the source's own for a restored prompt or notice (the ledger keys
        those messages by it), else one derived from the session and the step."""
        source = step.source_id or ""
        if self.own and kind in ("prompt", "notice") and source and not source.startswith("msg:"):
            return source
        return str(uuid.uuid5(NAMESPACE, f"{self.session_id}/{n}/{kind}"))


def as_claude(call: Call) -> tuple[str, dict[str, Any]] | None:
    """Another agent's call as the Claude Code tool that does the same, or None."""
    name, p = call.name.lower(), call.params
    path = next((p[k] for k in ("file_path", "filePath", "path", "absolute_path", "target_file")
                 if isinstance(p.get(k), str)), None)  # fmt: skip
    line = shell_line(call)
    if line is not None:
        return "Bash", {"command": line}
    if path and any(w in name for w in ("edit", "replace")):
        old = p.get("old_string", p.get("oldString"))
        new = p.get("new_string", p.get("newString"))
        if isinstance(old, str) and isinstance(new, str):
            return "Edit", {"file_path": path, "old_string": old, "new_string": new}
    if path and "write" in name:
        content = p.get("content", p.get("contents"))
        if isinstance(content, str):
            return "Write", {"file_path": path, "content": content}
    if path and any(w in name for w in ("read", "view")):
        return "Read", {"file_path": path}
    return None
