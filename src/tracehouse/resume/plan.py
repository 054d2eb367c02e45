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

import re
import shlex
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from tracehouse.errors import ConfigError
from tracehouse.resume import claude_code, codex
from tracehouse.resume.calls import write_new
from tracehouse.resume.conversation import Conversation, conversation
from tracehouse.sinks.protocol import SessionStore

# How each agent continues a session of its own, by its id.
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
    # A subagent is no session its agent resumes: it is continued as a new one.
    resumable = not s.get("is_subagent")
    if target == source and resumable and _still_there(s):
        return Plan(conv.label, source, target, "present", own_id, where,
                    RESUME_COMMANDS[target](own_id))  # fmt: skip
    if target not in WRITERS:
        raise ConfigError(
            f"{conv.label}: tracehouse writes sessions for {', '.join(WRITERS)} so far;"
            f" {target} cannot be given one (--in claude-code or --in codex can)"
        )
    writer = WRITERS[target]
    restore = target == source and resumable and bool(_UUID.match(own_id))
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
    path = writer.transcript_path(config, where, session_id, at)
    if restore and _within(s.get("source_path"), config) and writer is codex:
        # Codex keys a rollout's lines by their place in the file: back at its own path, the
        # file replaces what the ledger kept of it rather than standing beside it.
        path = Path(str(s["source_path"]))
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


def hint(session: dict[str, Any]) -> str:
    """How to continue `session` (its row), for the places people read it: its agent's own
    command while the agent still has it, else the `tracehouse resume` that writes it back
    (or into Claude Code, for an agent tracehouse writes no sessions for)."""
    provider, label = str(session["source_provider"]), str(session["label"])
    command = RESUME_COMMANDS.get(provider)
    if command and not session.get("is_subagent") and _still_there(session):
        where = session.get("workspace_path")
        line = shlex.join(command(str(session["source_session_id"])))
        return f"cd {shlex.quote(str(where))} && {line}" if where else line
    if provider in WRITERS and not session.get("is_subagent"):
        return f"tracehouse resume {label}"
    return f"tracehouse resume {label} --in claude-code"


def carry_out(chosen: Plan) -> None:
    if chosen.path is not None and chosen.records:
        write_new(chosen.path, chosen.records)


def _within(path: Any, folder: Path) -> bool:
    if not path:
        return False
    try:
        return Path(str(path)).resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def _still_there(s: dict[str, Any]) -> bool:
    path = s.get("source_path")
    return not s.get("source_missing_at") and bool(path) and Path(str(path)).exists()


def _counts(conv: Conversation) -> tuple[int, int, dict[str, int]]:
    messages = sum(1 for step in conv.steps if step.text)
    calls = sum(len(step.calls) for step in conv.steps)
    return messages, calls, dict(conv.left_out)
