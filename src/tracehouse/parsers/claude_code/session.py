"""A Claude Code session's running aggregates: what its row says beyond the kit's sums, counts and
title (`kit.turn_rows`), kept across appends."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

import orjson

from tracehouse.model import ids
from tracehouse.model.fields import cap
from tracehouse.parsers.kit.turn_rows import project_name

if TYPE_CHECKING:
    from tracehouse.parsers.claude_code.identity import Identity
    from tracehouse.parsers.kit.turn_rows import TurnRows

PROVIDER = "claude-code"

UNKNOWN_KEPT = 20  # raw unknown records kept per session (each capped)
UNKNOWN_BYTES = 2000


@dataclass
class SessionAggregate:
    cwd: str | None = None
    cwds: list[str] = field(default_factory=list)
    cwds_last: str | None = None
    git_branch: str | None = None
    version: str | None = None
    entrypoint: str | None = None
    slug: str | None = None
    custom_title: str | None = None
    ai_title: str | None = None
    summary: str | None = None
    agent_name: str | None = None
    permission_mode: str | None = None
    line_session_id: str | None = None
    continued_from: dict[str, str] | None = None  # `tracehouse resume` wrote it from this
    links: dict[str, list[str]] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    attachments: dict[str, int] = field(default_factory=dict)
    queue: dict[str, int] = field(default_factory=dict)
    queued: list[str] = field(default_factory=list)  # the prompts last enqueued, capped
    waiting: bool = False  # the last enqueued has seen no reply yet
    unknown: list[str] = field(default_factory=list)

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> SessionAggregate:
        if not state:
            return cls()
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in state.items() if k in names})

    def to_state(self) -> dict[str, Any]:
        return asdict(self)

    # -- observations -----------------------------------------------------------------------

    @staticmethod
    def timestamp(r: dict[str, Any]) -> str | None:
        ts = r.get("timestamp")
        if isinstance(ts, str) and len(ts) >= 19 and ts[:4].isdigit():
            return ts
        return None

    def count_record(self, kind: Any, subtype: Any) -> None:
        name = kind if subtype is None and isinstance(kind, str) else f"{kind}/{subtype}"
        self.records[name] = self.records.get(name, 0) + 1

    def count_attachment(self, kind: Any) -> None:
        self.attachments[str(kind)] = self.attachments.get(str(kind), 0) + 1

    def note_queue(self, op: Any, content: Any) -> None:
        """A prompt is queued when it waited for the agent: enqueued while a reply was still
        being written, or dequeued only after one was. Claude Code enqueues every prompt, and
        one dequeued before any reply (`-p`: 2 ms later) never waited."""
        self.queue[str(op)] = self.queue.get(str(op), 0) + 1
        if op == "enqueue" and isinstance(content, str) and content:
            self.queued = [*self.queued[-31:], cap(content, 200)]
            self.waiting = True
        elif op == "dequeue" and self.waiting and self.queued:
            self.queued.pop()
            self.waiting = False

    def note_envelope(self, r: dict[str, Any]) -> str | None:
        """Fold a record's envelope into the session; returns its timestamp (None if invalid)."""
        ts = self.timestamp(r)
        cwd = r.get("cwd")
        if cwd and cwd != self.cwds_last and isinstance(cwd, str):  # usually the same as before
            self.cwds_last = cwd
            self.cwd = self.cwd or cwd
            if cwd not in self.cwds and len(self.cwds) < 16:
                self.cwds.append(cwd)
        branch = r.get("gitBranch")
        if branch and isinstance(branch, str):
            self.git_branch = branch
        version = r.get("version")
        if version and isinstance(version, str):
            self.version = version
        slug = r.get("slug")
        if slug and isinstance(slug, str):
            self.slug = slug
        if self.entrypoint is None and isinstance(r.get("entrypoint"), str):
            self.entrypoint = r["entrypoint"]
        if self.line_session_id is None and isinstance(r.get("sessionId"), str):
            self.line_session_id = r["sessionId"]
        return ts

    def note_session_record(self, r: dict[str, Any]) -> None:
        kind = r.get("type")
        value = {
            "custom-title": r.get("customTitle"),
            "ai-title": r.get("aiTitle"),
            "summary": r.get("summary"),
            "agent-name": r.get("agentName"),
            "permission-mode": r.get("permissionMode"),
        }.get(str(kind))
        if isinstance(value, str) and value:
            setattr(self, str(kind).replace("-", "_"), value)
        for key in ("prUrl", "frameUrl", "relocatedCwd"):
            if isinstance(r.get(key), str):
                seen = self.links.setdefault(key, [])
                if r[key] not in seen and len(seen) < 16:
                    seen.append(r[key])
        origin = r.get("continuedFrom") if kind == "tracehouse-origin" else None
        if isinstance(origin, dict):
            self.continued_from = {k: v for k, v in origin.items()
                                   if isinstance(k, str) and isinstance(v, str)}  # fmt: skip
        worktree = r.get("worktreeSession")
        if isinstance(worktree, dict) and isinstance(worktree.get("worktreePath"), str):
            self.links["worktree"] = [worktree["worktreePath"]]

    def keep_unknown(self, r: dict[str, Any]) -> None:
        """Unknown record types are never fatal: the raw line is kept (capped) in metadata."""
        if len(self.unknown) < UNKNOWN_KEPT:
            self.unknown.append(orjson.dumps(r).decode()[:UNKNOWN_BYTES])

    # -- the row ----------------------------------------------------------------------------

    def row_fields(self, ident: Identity, talk: TurnRows) -> dict[str, Any]:
        """What the session row holds beyond the kit's (`TurnRows.session_row`)."""
        workspace = self.cwd
        parent = _parent(ident, self.line_session_id)
        metadata = {
            "slug": self.slug,
            "cwds": self.cwds if len(self.cwds) > 1 else None,
            "agent_id": ident.agent_id,
            "agent_name": self.agent_name,
            "agent_type": ident.meta.get("agentType"),
            "worktree": ident.meta.get("worktreePath"),
            "line_session_id": self.line_session_id,
            "permission_mode": self.permission_mode,
            "continued_from": self.continued_from,
            "links": self.links or None,
            "records": self.records,
            "attachments": self.attachments or None,
            "queue": self.queue or None,
            "unknown_records": self.unknown or None,
        }
        return {
            # Claude Code's own title (`/rename`, its generated one, a compaction summary),
            # else the first prompt's (the kit's): never blank where a prompt exists.
            "title": self.custom_title or self.ai_title or self.summary,
            "llm_provider": llm_provider(talk.model),
            "workspace_path": workspace,
            "project": project_name(workspace) or ident.project,
            "git_branch": self.git_branch,
            "tool_version": self.version,
            "entrypoint": self.entrypoint,
            "is_subagent": ident.is_subagent,
            "parent_session_id": parent and ids.session_id(PROVIDER, parent),
            "parent_source_session_id": parent,
            "task_description": ident.meta.get("description"),
            "task_status": _task_status(ident.meta) if ident.is_subagent else None,
            "metadata": metadata,
        }


def _parent(ident: Identity, line_session_id: str | None) -> str | None:
    """A v2.1 subagent's parent is its directory; a v2.0 agent file only names it in its lines.
    The store replaces this with the session whose Task call spawned it, where that is known."""
    if not ident.is_subagent:
        return None
    return ident.parent_source_session_id or line_session_id or None


def _task_status(meta: dict[str, Any]) -> str | None:
    """A subagent's status from its `.meta.json` sidecar: from 2.1.3xx `finished` says its task
    is done, `stoppedByUser` (or `sweptByStop`, a stop of everything running) that a person
    stopped it first; older sidecars say nothing (NULL). The CLI writes each only when true."""
    if meta.get("finished"):
        return "completed"
    if meta.get("stoppedByUser") or meta.get("sweptByStop"):
        return "aborted"
    return None if meta.get("finished") is None else "running"


def llm_provider(model: object) -> str | None:
    """Anthropic for a Claude model; a model that is not text (a damaged line) names none."""
    return "anthropic" if isinstance(model, str) and model.startswith("claude") else None
