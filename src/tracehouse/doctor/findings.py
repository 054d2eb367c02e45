"""What a check finds, and what doctor reads of the machine (injectable for tests)."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Finding:
    check: str
    status: Status
    detail: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "status": self.status, "detail": self.detail, "fix": self.fix}


@dataclass(frozen=True)
class Host:
    now: float = field(default_factory=time.time)
    tmp: str = field(default_factory=tempfile.gettempdir)
    # None: not Linux, or no inotify (native events there have no per-user watch limit).
    inotify_watches_file: str | None = "/proc/sys/fs/inotify/max_user_watches"
