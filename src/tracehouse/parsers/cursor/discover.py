"""Where Cursor keeps its databases, and which file is which unit (FORMATS §3.1).

A root is a Cursor `User` directory. Units: `globalStorage/state.vscdb` and every
`workspaceStorage/<id>/state.vscdb`, with the folder its `workspace.json` names (percent-decoded;
remote URIs kept as URIs; numeric and `empty-window` ids have none). `state.vscdb.backup` is an
older copy of the same data and is never read.

`plan_unit` is here, not with the reader: a sync plans from discovery alone (see `reader.py`
for what a changed unit's read does, and why a changed database is read again once an hour).
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from tracehouse.parsers.base import Unit
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.sqlite_snapshot import signature

RECONCILE_SECONDS = 3600.0  # a changed database is reconciled in full at most this often

PROVIDER = "cursor"
DB_NAME = "state.vscdb"
GLOBAL = "globalStorage"
WORKSPACES = "workspaceStorage"


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Linux, macOS and Windows user dirs under `home`, `%APPDATA%`, and under WSL the Windows
    users' dirs on `/mnt/c`."""
    roots = [
        home / ".config" / "Cursor" / "User",
        home / "Library" / "Application Support" / "Cursor" / "User",
        home / "AppData" / "Roaming" / "Cursor" / "User",
    ]
    if env.get("APPDATA"):
        roots.append(Path(env["APPDATA"]) / "Cursor" / "User")
    if env.get("WSL_DISTRO_NAME"):
        roots += [Path(p) for p in sorted(glob.glob("/mnt/c/Users/*/AppData/Roaming/Cursor/User"))]
    unique = dict.fromkeys(os.path.abspath(r) for r in roots)
    return [Path(r) for r in unique]


def _info(user: str, parts: list[str]) -> dict[str, Any]:
    if parts[0] == GLOBAL:
        return {"scope": "global", "user": user}
    folder = os.path.join(user, *parts[:-1])
    return {"scope": "workspace", "user": user, "workspace_id": parts[1],
            "workspace": workspace_path(folder)}  # fmt: skip


# A changed database, `-wal` or `-journal` maps to its database's unit.
LAYOUT = Layout(PROVIDER, (f"{GLOBAL}/{DB_NAME}", f"{WORKSPACES}/*/{DB_NAME}"), _info)
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots


def workspace_path(folder: str) -> str | None:
    """The folder (or `.code-workspace` file) a workspace DB belongs to, from `workspace.json`."""
    try:
        data = orjson.loads(read_file(os.path.join(folder, "workspace.json")))
    except (OSError, orjson.JSONDecodeError):
        return None
    uri = data.get("folder") or data.get("workspace") if isinstance(data, dict) else None
    return uri_path(uri) if isinstance(uri, str) else None


def uri_path(uri: str) -> str:
    """`file:///home/me/x` → `/home/me/x`, `file:///c%3A/Users/x` → `c:/Users/x`; any other
    scheme (`vscode-remote://ssh-remote+host/…`) stays a URI."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return uri
    path = unquote(parts.path)
    if len(path) > 2 and path[0] == "/" and path[2] == ":":  # /c:/Users → c:/Users
        path = path[1:]
    return f"//{parts.netloc}{path}" if parts.netloc else path


def plan_unit(unit: Unit, cursor: Mapping[str, Any] | None, full: bool) -> int | None:
    """Bytes a parse may read, or None when the stat shows nothing changed."""
    files = signature(unit.key)
    if files["db"] is None:
        return None  # vanished since discovery: the next run flags it missing
    size = sum(f[1] for f in files.values() if f)
    if full or not cursor or cursor.get("missing") or cursor.get("files") != files:
        return size
    # Unchanged since the last read, but changed since the last full reconciliation: a row
    # updated in place below the rowid window would only show up in one.
    stale = time.time() - float(cursor.get("reconciled_at") or 0) >= RECONCILE_SECONDS
    return size if stale and cursor.get("reconciled_files") != files else None
