"""Who a transcript is: its session id, and for a subagent its agent, parent and task."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracehouse.model import ids
from tracehouse.parsers.base import Unit
from tracehouse.parsers.claude_code.discover import read_meta
from tracehouse.parsers.claude_code.tools import subagent_source_id

PROVIDER = "claude-code"


@dataclass(frozen=True)
class Identity:
    """Who the session is, from the file's place on disk (see discover.py)."""

    path: str
    source_session_id: str
    project: str
    agent_id: str | None = None
    parent_source_session_id: str | None = None
    via: str | None = None  # how a subagent was started: Task, workflow
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def session_id(self) -> str:
        return ids.session_id(PROVIDER, self.source_session_id)

    @property
    def is_subagent(self) -> bool:
        return self.agent_id is not None


def identity(unit: Unit) -> Identity:
    info = unit.info
    project = str(info.get("project", ""))
    agent_id = info.get("agent_id")
    if agent_id:
        return Identity(
            path=unit.key,
            source_session_id=subagent_source_id(project, str(agent_id)),
            project=project,
            agent_id=str(agent_id),
            parent_source_session_id=info.get("parent"),
            via=info.get("via"),
            meta=read_meta(next(iter(info.get("beside") or ()), None)),
        )
    return Identity(path=unit.key, source_session_id=str(info["session"]), project=project)
