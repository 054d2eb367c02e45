"""A rollout's session row: identity, settings and running totals, kept across appends."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any

from tracehouse.model import ids
from tracehouse.parsers.codex import records as rec

PROVIDER = rec.PROVIDER
UNKNOWN_KEPT = 16  # unknown records kept whole in the session metadata
META_KEPT = (
    "originator",
    "source",
    "thread_source",
    "model_provider",
    "session_id",
    "forked_from_id",
    "parent_thread_id",
    "agent_nickname",
    "agent_role",
    "agent_path",
    "memory_mode",
    "history_mode",
)
TURN_SETTINGS = ("approval_policy", "sandbox_policy", "effort", "summary", "personality")


@dataclass
class SessionAggregate:
    thread_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # the first session_meta, trimmed
    created_at: str | None = None
    first_ts: str | None = None
    last_ts: str | None = None
    cwd: str | None = None
    model: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # from the latest turn_context
    title_event: str | None = None
    generation: str = "G2"
    records: dict[str, int] = field(default_factory=dict)
    replayed: int = 0
    mirrored_token_events: int = 0
    compactions: int = 0
    unknown: list[Any] = field(default_factory=list)

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> SessionAggregate:
        return cls(**state) if state else cls()

    def to_state(self) -> dict[str, Any]:
        return asdict(self)

    def count(self, kind: str) -> None:
        self.records[kind] = self.records.get(kind, 0) + 1

    def note_time(self, ts: Any) -> str | None:
        # Only real ISO timestamps order a session; trimmed or missing ones are ignored.
        if not isinstance(ts, str) or len(ts) < 19 or ts[4] != "-":
            return None
        if self.first_ts is None or ts < self.first_ts:
            self.first_ts = ts
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts
        return ts

    def note_meta(self, p: dict[str, Any], ts: str | None) -> bool:
        """The first session_meta is the thread's own; later ones are copied from a parent."""
        if self.meta:
            return False
        kept = {k: p[k] for k in META_KEPT if p.get(k) is not None}
        git = p.get("git")
        if isinstance(git, dict):
            kept["git"] = git
        instructions = p.get("instructions") or p.get("base_instructions")
        if isinstance(instructions, dict):
            instructions = instructions.get("text")
        if isinstance(instructions, str) and instructions:
            kept["instructions_chars"] = len(instructions)
        kept["cli_version"] = p.get("cli_version")
        origin = p.get("continued_from")  # `tracehouse resume` wrote it from another session
        if isinstance(origin, dict):
            kept["continued_from"] = {k: v for k, v in origin.items()
                                      if isinstance(k, str) and isinstance(v, str)}  # fmt: skip
        self.meta = kept
        if isinstance(p.get("id"), str) and not self.thread_id:
            self.thread_id = p["id"]
        self.created_at = self.note_time(p.get("timestamp")) or ts
        self.cwd = p.get("cwd") if isinstance(p.get("cwd"), str) else self.cwd
        return True

    def note_turn_context(self, p: dict[str, Any]) -> None:
        if isinstance(p.get("model"), str):
            self.model = p["model"]
        if isinstance(p.get("cwd"), str):
            self.cwd = self.cwd or p["cwd"]
        for key in TURN_SETTINGS:
            if p.get(key) is not None:
                self.settings[key] = p[key]

    def keep_unknown(self, record: dict[str, Any]) -> None:
        if len(self.unknown) < UNKNOWN_KEPT:
            self.unknown.append(record)

    @property
    def parent_thread(self) -> str | None:
        return self.meta.get("forked_from_id") or rec.spawn_parent(self.meta)

    @property
    def is_child(self) -> bool:
        return bool(self.parent_thread or rec.subagent_kind(self.meta))

    def row_fields(self, title: str | None, parent: str | None) -> dict[str, Any]:
        """What the session row holds beyond the kit's (`TurnRows.session_row`)."""
        meta = self.meta
        git: dict[str, Any] = meta["git"] if isinstance(meta.get("git"), dict) else {}
        subagent = rec.subagent_kind(meta)
        metadata = {
            **{k: meta[k] for k in META_KEPT if k in meta},
            "instructions_chars": meta.get("instructions_chars"),
            "continued_from": meta.get("continued_from"),
            "origin": rec.origin(meta.get("originator"), meta.get("source")),
            "subagent": subagent,
            "generation": self.generation,
            "settings": self.settings or None,
            "records": self.records,
            "replayed_records": self.replayed or None,
            "mirrored_token_events": self.mirrored_token_events or None,
            "compactions": self.compactions or None,
            "unknown_records": self.unknown or None,
        }
        return {
            "title": title,
            "created_at": self.created_at or self.first_ts,
            "updated_at": self.last_ts,
            "model": self.model,
            "llm_provider": meta.get("model_provider") or ("openai" if self.model else None),
            "workspace_path": self.cwd,
            "project": PurePath(self.cwd).name or None if self.cwd else None,
            "git_branch": git.get("branch"),
            "git_commit": git.get("commit_hash"),
            "git_remote": git.get("repository_url"),
            "tool_version": meta.get("cli_version"),
            "entrypoint": meta.get("originator"),
            "is_subagent": bool(subagent),
            "parent_session_id": ids.session_id(PROVIDER, parent) if parent else None,
            "parent_source_session_id": parent or None,
            "task_description": meta.get("agent_role") or meta.get("agent_nickname"),
            "metadata": metadata,
        }
