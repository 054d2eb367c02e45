"""Where Copilot CLI keeps sessions (README.md here). Three layouts, all still on disk after
upgrades: `history-session-state/session_<uuid>_<ms>.json` (to Oct 2025: one JSON document,
rewritten whole), `session-state/<uuid>.jsonl` (late 2025: the event log) and
`session-state/<uuid>/events.jsonl` (1.0: the event log, with `workspace.yaml` beside it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracehouse.parsers.kit.layout import Layout

PROVIDER = "copilot-cli"
LEGACY = re.compile(r"^session_(.+)_\d+\.json$")


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    moved = env.get("COPILOT_HOME")
    return [Path(moved).expanduser() if moved else home / ".copilot"]


def _info(top: str, parts: list[str]) -> Mapping[str, Any] | None:
    if parts[0] == "history-session-state":
        legacy = LEGACY.match(parts[-1])
        return {"form": "legacy", "session": legacy.group(1)} if legacy else None
    if parts[-1] == "events.jsonl":  # its title and place in `workspace.yaml`, renamed apart
        space = os.path.join(top, *parts[:-1], "workspace.yaml")
        return {"form": "events", "session": parts[-2], "beside": [space]}
    return {"form": "events", "session": parts[-1].removesuffix(".jsonl")}


LAYOUT = Layout(
    PROVIDER,
    (
        "session-state/*/events.jsonl",
        "session-state/*.jsonl",
        "history-session-state/session_*.json",
    ),
    _info,
    sidecars=("workspace.yaml",),
)
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots
