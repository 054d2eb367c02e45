"""`tracehouse resume`: how a session is continued, and the one write tracehouse makes into an
agent's directory.

Three cases. The session's own agent still has its file: the agent's resume command, nothing
written. Its own agent lost it (deleted after 30 days, archived, another machine's session from
the team ledger): the session written back in the agent's format, under its own id, where the
agent looks. Another agent: a new session of that agent holding the conversation. A file is only
ever created, never replaced or appended to; the agent's directory must already exist (an agent
that was never run here has nowhere we should guess).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from tracehouse.errors import ConfigError
from tracehouse.model.labels import reference
from tracehouse.resume import claude_code, codex
from tracehouse.resume.calls import write_new
from tracehouse.resume.conversation import Conversation, conversation
from tracehouse.shown import command_line, escaped_line, operands
from tracehouse.store.protocol import SessionStore

# How each agent continues a session of its own, by its id (one of `ID_SHAPES`).
RESUME_COMMANDS: dict[str, Callable[[str], list[str]]] = {
    "claude-code": lambda sid: ["claude", "--resume", sid],
    "codex": lambda sid: ["codex", "resume", sid],
    "gemini-cli": lambda sid: ["gemini", "--resume", sid],
    "opencode": lambda sid: ["opencode", "--session", sid],
    "cursor-agent": lambda sid: ["cursor-agent", "--resume", sid],
    "copilot-cli": lambda sid: ["copilot", f"--resume={sid}"],  # as the conformance suite runs it
}
# The agents tracehouse writes sessions for, and the module that writes each one's format.
WRITERS: dict[str, ModuleType] = {"claude-code": claude_code, "codex": codex}
AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex"}
NAMESPACE = uuid.UUID("5f0c6a4e-0d1f-4c25-9a57-7a1a9c0f2c12")  # ids of sessions resume makes
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
# The ids each agent gives its sessions. A stored id of another shape is never put on a command
# line nor in a file name: it came from a ledger, and `--dangerously-skip-permissions` is an id
# as far as a push is concerned.
ID_SHAPES: dict[str, re.Pattern[str]] = {
    "claude-code": _UUID,
    "codex": _UUID,
    "gemini-cli": _UUID,
    "opencode": re.compile(r"^ses_[A-Za-z0-9]{8,64}$"),
    "cursor-agent": _UUID,
    "copilot-cli": _UUID,
}


@dataclass
class Plan:
    label: str
    source: str  # the session's agent
    target: str  # the agent that continues it
    action: str  # "present": the agent has it; "restore": written back; "new": a new session
    session_id: str  # the id the target resumes
    cwd: str
    command: list[str]
    path: Path | None = None  # the file written (or that would be)
    records: list[dict[str, Any]] = field(default_factory=list)
    messages: int = 0
    tool_calls: int = 0
    left_out: dict[str, int] = field(default_factory=dict)

    def to_json(self, written: bool) -> dict[str, Any]:
        return {
            "label": self.label,
            "source": self.source,
            "target": self.target,
            "action": self.action,
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "command": self.command,
            "path": str(self.path) if self.path else None,
            "written": written,
            "messages": self.messages,
            "toolCalls": self.tool_calls,
            "leftOut": self.left_out,
        }


def plan(
    store: SessionStore,
    ref: str,
    *,
    target: str | None,
    cwd: str | None,
    home: Path,
    env: dict[str, str],
) -> Plan:
    """What `resume` would do for `ref`."""
    conv = conversation(store, ref)
    s = conv.session
    source = str(s["source_provider"])
    target = target or source
    if target not in RESUME_COMMANDS:
        raise ConfigError(f"--in {target!r}: one of {', '.join(RESUME_COMMANDS)}")
    where = cwd or s.get("workspace_path")
    if not where:
        raise ConfigError(f"{conv.label} names no workspace: give --cwd DIR to resume it in")
    own_id = str(s["source_session_id"])
    # A subagent is no session its agent resumes: it is continued as a new one; nor is a
    # session whose stored id is not of its agent's shape.
    resumable = not s.get("is_subagent") and fits(source, own_id)
    if target == source and resumable and agent_has(s, where, home, env):
        return Plan(conv.label, source, target, "present", own_id, where,
                    RESUME_COMMANDS[target](own_id))  # fmt: skip
    if target not in WRITERS:
        raise ConfigError(
            f"{conv.label}: tracehouse writes sessions for {', '.join(WRITERS)} so far;"
            f" {target} cannot be given one (--in claude-code or --in codex can)"
        )
    writer = WRITERS[target]
    restore = target == source and resumable
    # A new session's id follows from the one it continues: resuming it again finds the file
    # written the first time (and refuses to write it twice).
    seed = f"{source}/{own_id}/{target}"
    at = s.get("created_at")
    if restore:
        session_id = own_id
    elif target == "codex":
        session_id = codex.new_id(seed, at)
    else:
        session_id = str(uuid.uuid5(NAMESPACE, seed))
    config = writer.config_dir(home, env)
    stored = s.get("source_path") if restore else None
    path = destination(writer, config, where, session_id, at, stored)
    if not config.is_dir():
        raise ConfigError(
            f"{AGENT_NAMES[target]} keeps its sessions in {config}, which does not exist: run it"
            f" once as this user, or point its variable at it (it would go to {path})"
        )
    if path.exists():  # written before (or the agent has it): resumed as it is, never rewritten
        return Plan(conv.label, source, target, "present", session_id, where,
                    writer.command(session_id), path)  # fmt: skip
    records = list(writer.lines(conv, session_id, where, restore=restore))
    return Plan(conv.label, source, target, "restore" if restore else "new", session_id, where,
                writer.command(session_id), path, records, *_counts(conv))  # fmt: skip


def fits(agent: str, session_id: str) -> bool:
    """Whether `session_id` is of the shape `agent` gives its sessions."""
    shape = ID_SHAPES.get(agent)
    return shape is not None and shape.match(session_id) is not None


def destination(
    writer: ModuleType, config: Path, cwd: str, session_id: str, at: str | None,
    stored: Any = None,
) -> Path:  # fmt: skip
    """The file a writer creates, rebuilt from validated parts: the agent's own session folder,
    an id of that agent's shape, the agent's file name pattern. A stored path is never used as
    it stands (a push can name `~/.codex/AGENTS.md`): at most its file name, where the writer
    checks it is one its agent would give this session. The one rule for every writer."""
    if not _UUID.match(session_id):
        raise ConfigError(f"session id {escaped_line(session_id)!r} is not of the agent's shape")
    path: Path = writer.transcript_path(config, cwd, session_id, at)
    restored = getattr(writer, "restored_path", None)
    if stored and restored is not None:
        path = restored(config, session_id, str(stored)) or path
    # The agent's session folder may itself be a link (to another disk); nothing below it may
    # lead out of it.
    root = config / path.relative_to(config).parts[0]
    try:
        inside = Path(os.path.realpath(path.parent)).is_relative_to(os.path.realpath(root))
    except OSError as exc:
        raise ConfigError(f"{escaped_line(str(path))}: {exc.strerror or exc}") from None
    if not inside:
        raise ConfigError(f"{escaped_line(str(path.parent))} leads outside {root}: not written")
    return path


def hint(session: dict[str, Any]) -> str:
    """How to continue `session` (its row), for the places people read it: its agent's own
    command while the agent still has it, else the `tracehouse resume` that writes it back
    (or into Claude Code, for an agent tracehouse writes no sessions for). Always a line that
    is safe to paste."""
    provider = str(session["source_provider"])
    own_id = str(session["source_session_id"])
    command = RESUME_COMMANDS.get(provider)
    if (command and not session.get("is_subagent") and fits(provider, own_id)
            and agent_has(session, session.get("workspace_path"), Path.home(),
                          dict(os.environ))):  # fmt: skip
        where = session.get("workspace_path")
        line = command_line(command(own_id), str(where) if where else None)
        if line is not None:
            return line
    ref = reference(session.get("label"), str(session["session_id"]))
    if provider in WRITERS and not session.get("is_subagent"):
        return str(command_line(["tracehouse", "resume", *operands([], [ref])]))
    return str(command_line(["tracehouse", "resume", *operands(["--in", "claude-code"], [ref])]))


def carry_out(chosen: Plan) -> None:
    if chosen.path is not None and chosen.records:
        try:
            write_new(chosen.path, chosen.records)
        except FileExistsError:
            raise ConfigError(f"{escaped_line(str(chosen.path))} exists: not written") from None
        except OSError as exc:
            where = escaped_line(str(exc.filename or chosen.path))
            raise ConfigError(f"{where}: {exc.strerror or exc}; not written") from None


def agent_has(s: dict[str, Any], cwd: Any, home: Path, env: dict[str, str]) -> bool:
    """Whether the session's own agent would find it on this machine: where that agent looks
    (Claude Code in its project folder for the workspace, Codex under `sessions/` by id), not
    where the ledger read it (a backup imported with `--home` is no session of this
    machine's `~/.claude`). Agents tracehouse writes no sessions for: their stored file."""
    provider = str(s["source_provider"])
    writer = WRITERS.get(provider)
    if writer is None:
        return _still_there(s)
    if not cwd:
        return False
    try:
        return bool(
            writer.holds(writer.config_dir(home, env), str(cwd), str(s["source_session_id"]))
        )
    except OSError:
        return False


def _still_there(s: dict[str, Any]) -> bool:
    path = s.get("source_path")
    return not s.get("source_missing_at") and bool(path) and Path(str(path)).exists()


def _counts(conv: Conversation) -> tuple[int, int, dict[str, int]]:
    messages = sum(1 for step in conv.steps if step.text)
    calls = sum(len(step.calls) for step in conv.steps)
    return messages, calls, dict(conv.left_out)
