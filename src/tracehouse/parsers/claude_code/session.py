"""A Claude Code session's running aggregates: what the session row says, kept across appends."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import orjson

from tracehouse.model import ids
from tracehouse.model.rows import recorded
from tracehouse.model.titles import first_line, prompt_title

if TYPE_CHECKING:
    from tracehouse.parsers.claude_code.identity import Identity

UNKNOWN_KEPT = 20  # raw unknown records kept per session (each capped)
UNKNOWN_BYTES = 2000


@dataclass
class SessionAggregate:
    messages: int = 0
    turns: int = 0
    tool_calls: int = 0
    tokens: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    first_timestamp: str | None = None
    max_timestamp: str | None = None
    cwd: str | None = None
    cwds: list[str] = field(default_factory=list)
    cwds_last: str | None = None
    git_branch: str | None = None
    version: str | None = None
    entrypoint: str | None = None
    slug: str | None = None
    model: str | None = None
    custom_title: str | None = None
    ai_title: str | None = None
    summary: str | None = None
    first_prompt: str | None = None  # the title when Claude Code gave none
    first_line: str | None = None  # …and when no prompt held more than an agent's tags
    agent_name: str | None = None
    permission_mode: str | None = None
    line_session_id: str | None = None
    continued_from: dict[str, str] | None = None  # `tracehouse resume` wrote it from this
    links: dict[str, list[str]] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    attachments: dict[str, int] = field(default_factory=dict)
    queue: dict[str, int] = field(default_factory=dict)
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

    def note_prompt(self, text: str) -> None:
        if self.first_prompt is None:
            self.first_prompt = prompt_title(text)
        if self.first_line is None:
            self.first_line = first_line(text)

    def count_queue(self, op: Any) -> None:
        self.queue[str(op)] = self.queue.get(str(op), 0) + 1

    def note_envelope(self, r: dict[str, Any]) -> str | None:
        """Fold a record's envelope into the session; returns its timestamp (None if invalid)."""
        ts = self.timestamp(r)
        if ts:
            if self.first_timestamp is None or ts < self.first_timestamp:
                self.first_timestamp = ts
            if self.max_timestamp is None or ts > self.max_timestamp:
                self.max_timestamp = ts
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

    def add_tokens(self, delta: list[int]) -> None:
        self.tokens = [a + b for a, b in zip(self.tokens, delta, strict=True)]

    # -- the row ----------------------------------------------------------------------------

    def session_row(self, ident: Identity) -> dict[str, Any]:
        from tracehouse.parsers.claude_code.turns import PROVIDER, llm_provider

        inp, out, cache_read, cache_write, reasoning = self.tokens
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
            "session_id": ident.session_id,
            "source_provider": PROVIDER,
            "source_session_id": ident.source_session_id,
            "label": ids.session_label(PROVIDER, ident.source_session_id),
            # Claude Code's own title (`/rename`, its generated one, a compaction summary),
            # else the first prompt's first line: never blank where a prompt exists.
            "title": self.custom_title
            or self.ai_title
            or self.summary
            or self.first_prompt
            or self.first_line,
            "created_at": self.first_timestamp,
            "updated_at": self.max_timestamp,
            "model": self.model,
            "llm_provider": llm_provider(self.model),
            "workspace_path": workspace,
            "project": _project_name(workspace) or ident.project,
            "git_branch": self.git_branch,
            "git_commit": None,
            "git_remote": None,
            "tool_version": self.version,
            "entrypoint": self.entrypoint,
            "is_subagent": ident.is_subagent,
            "parent_session_id": parent and ids.session_id(PROVIDER, parent),
            "parent_source_session_id": parent,
            "parent_message_id": None,
            "spawn_tool_call_id": None,
            "task_description": ident.meta.get("description"),
            "task_status": _task_status(ident.meta) if ident.is_subagent else None,
            **recorded(
                {
                    "input_tokens": inp,
                    "output_tokens": out,
                    "cached_input_tokens": cache_read,
                    "cache_write_tokens": cache_write,
                    "reasoning_tokens": reasoning,
                    "total_tokens": inp + out,
                }
            ),
            "turn_count": self.turns,
            "message_count": self.messages,
            "tool_call_count": self.tool_calls,
            "metadata": {k: v for k, v in metadata.items() if v is not None},
            "source_path": ident.path,
        }


def _parent(ident: Identity, line_session_id: str | None) -> str | None:
    """A v2.1 subagent's parent is its directory; a v2.0 agent file only names it in its lines.
    The store replaces this with the session whose Task call spawned it, where that is known."""
    if not ident.is_subagent:
        return None
    return ident.parent_source_session_id or line_session_id or None


def _project_name(workspace: str | None) -> str | None:
    if not workspace:
        return None
    name = PurePath(workspace.replace("\\", "/")).name
    return name or None


def _task_status(meta: dict[str, Any]) -> str | None:
    """A subagent's status from its `.meta.json` sidecar: from 2.1.3xx `finished` says whether
    its task is done; older sidecars say nothing (NULL)."""
    finished = meta.get("finished")
    return None if finished is None else "completed" if finished else "running"
