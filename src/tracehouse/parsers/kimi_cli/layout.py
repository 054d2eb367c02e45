"""Where Kimi CLI keeps sessions, and which file is which session (README.md here).

`sessions/<md5 of the work dir>/<session uuid>/` holds `wire.jsonl` (the event log: times,
replies, calls, results, usage) and `context.jsonl` (what the model saw, without times). A
session is read from its wire log, or from its context where there is no wire log. Subagents:
1.17 writes `context_sub_<n>.jsonl` beside the parent's files; later releases
`subagents/<agent id>/` with a wire log and context of their own.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.untrusted import items, mapping

PROVIDER = "kimi-cli"
SESSION = "sessions/*/*"


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    moved = env.get("KIMI_SHARE_DIR")
    return [Path(moved).expanduser() if moved else home / ".kimi"]


def _info(top: str, parts: list[str]) -> Mapping[str, Any] | None:
    name, folder = parts[-1], os.path.join(top, *parts[:-1])
    if name == "context.jsonl" and os.path.lexists(os.path.join(folder, "wire.jsonl")):
        return None  # the wire log is the session's unit
    session = parts[2]
    info: dict[str, Any] = {"workspace": work_dirs(top).get(parts[1]),
                            "form": "wire" if name == "wire.jsonl" else "context"}  # fmt: skip
    if name.startswith("context_sub_"):
        agent = name.removeprefix("context_").removesuffix(".jsonl")
        info.update(session=f"{session}/{agent}", parent=session)
    elif len(parts) == 6:  # sessions/<hash>/<uuid>/subagents/<agent id>/<file>
        info.update(session=f"{session}/{parts[4]}", parent=session)
    else:
        info["session"] = session
    # Read with the log, and written after its last line: a subagent's `meta.json` (how its task
    # ended), a session's `state.json` (the title a later release gives it).
    info["beside"] = [os.path.join(folder, "meta.json" if "parent" in info else "state.json")]
    return info


def work_dirs(top: str) -> dict[str, str]:
    """The work dirs `kimi.json` lists, by the md5 of their path (the session folder's name)."""
    try:
        listed = orjson.loads(read_file(os.path.join(top, "kimi.json")))
    except (OSError, orjson.JSONDecodeError):
        return {}
    paths = [mapping(d).get("path") for d in items(mapping(listed).get("work_dirs"))]
    return {hashlib.md5(p.encode()).hexdigest(): p for p in paths if isinstance(p, str)}


LAYOUT = Layout(
    PROVIDER,
    (
        f"{SESSION}/wire.jsonl",
        f"{SESSION}/context.jsonl",
        f"{SESSION}/context_sub_*.jsonl",
        f"{SESSION}/subagents/*/wire.jsonl",
        f"{SESSION}/subagents/*/context.jsonl",
    ),
    _info,
    sidecars=("meta.json", "state.json"),
)
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots
