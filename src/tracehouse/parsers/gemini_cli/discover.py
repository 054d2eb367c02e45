"""Where Gemini CLI keeps its chats, and which file is which session (README.md here).

A root is a `.gemini` directory (`~/.gemini`, or `$GEMINI_CLI_HOME/.gemini`). Each project has a
directory `tmp/<id>/` (a hash of its path, or from 2026-02 a slug); its `chats/` holds a main
chat per file and a subagent's under its parent's sessionId; `logs.json` is its prompt log.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracehouse.parsers.kit.layout import Layout

PROVIDER = "gemini-cli"
CHATS = ("tmp/*/chats/*.json", "tmp/*/chats/*.jsonl")
SUBAGENTS = ("tmp/*/chats/*/*.json", "tmp/*/chats/*/*.jsonl")


def _info(top: str, parts: list[str]) -> Mapping[str, Any] | None:
    if len(parts) == 3:
        return {"logs": True}
    if len(parts) == 4:
        return {"child": False}
    # A subagent's chat, under its parent's sessionId (or a synthetic parent such as
    # `skill-extraction-<hex>`, which names no session).
    synthetic = parts[3].startswith("skill-extraction-")
    return {"child": True, **({} if synthetic else {"parent": parts[3]})}


LAYOUT = Layout(PROVIDER, (*CHATS, *SUBAGENTS, "tmp/*/logs.json"), _info)
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    # GEMINI_CLI_HOME stands in for the home directory; `.gemini` is always beneath it.
    base = env.get("GEMINI_CLI_HOME")
    return [Path(base).expanduser() / ".gemini" if base else home / ".gemini"]
