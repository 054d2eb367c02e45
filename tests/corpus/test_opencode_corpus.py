"""OpenCode on every fixture home that holds its data: no rejects, and sessions, messages, tool
calls and tokens equal a count made here from the files and databases, independently of the
parser (which reads the same records through its own code)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store

pytestmark = pytest.mark.corpus


def opencode_roots(corpus: Path) -> list[Path]:
    roots = [h / ".local" / "share" / "opencode" for h in sorted((corpus / "homes").iterdir())]
    return [r for r in roots if r.is_dir()]


def records(root: Path) -> dict[str, tuple[list[dict], list[dict]]]:
    """Session id → (its messages, its parts), from every generation under the root."""
    out: dict[str, tuple[list[dict], list[dict]]] = {}
    for db in root.glob("opencode*.db"):
        conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
        for (sid,) in conn.execute("SELECT id FROM session"):
            messages = [json.loads(d) for (d,) in conn.execute(
                "SELECT data FROM message WHERE session_id = ?", (sid,))]  # fmt: skip
            parts = [json.loads(d) for (d,) in conn.execute(
                "SELECT data FROM part WHERE session_id = ?", (sid,))]  # fmt: skip
            out[sid] = (messages, parts)
        conn.close()
    for info in [*root.glob("storage/session/*/ses_*.json"),
                 *root.glob("project/*/storage/session/info/ses_*.json")]:  # fmt: skip
        sid = info.stem
        gen0 = info.parent.name == "info"
        base = info.parent.parent if gen0 else root / "storage"
        messages = [json.loads(p.read_text()) for p in (base / "message" / sid).glob("*.json")]
        parts = []
        for message in messages:
            folder = base / "part" / sid / message["id"] if gen0 else base / "part" / message["id"]
            parts += [json.loads(p.read_text()) for p in folder.glob("*.json")]
        out[sid] = (messages, parts)
    return out


def test_every_opencode_home_imports_whole(corpus: Path, tmp_path: Path) -> None:
    roots = opencode_roots(corpus)
    assert len(roots) >= 3
    generations = set()
    for root in roots:
        found = records(root)
        generations |= {"db" if list(root.glob("*.db")) else "", "json" if
                        (root / "storage" / "session").is_dir() else "",
                        "gen0" if (root / "project").is_dir() else ""}  # fmt: skip
        said = {sid: r for sid, r in found.items() if r[0]}
        tokens = 0
        for messages, parts in said.values():
            steps = [p for p in parts if p["type"] == "step-finish"]
            for source in steps or [m for m in messages if m["role"] == "assistant"]:
                t = source.get("tokens") or {}
                cache = t.get("cache") or {}
                tokens += t.get("total") or sum(
                    t.get(k, 0) for k in ("input", "output", "reasoning")
                ) + cache.get("read", 0) + cache.get("write", 0)
        errors = sum(1 for ms, _ in said.values() for m in ms if m.get("error"))
        store = open_store(tmp_path / f"{root.parent.parent.parent.name}.db")
        report = sync(store, SyncOptions(sources={"opencode": [root]}, workers=0))
        assert report.ok and report.rejects == [], (root, report.rejects)
        (got,) = store.query(
            "SELECT count(*) AS sessions, coalesce(sum(message_count), 0) AS messages,"
            " coalesce(sum(tool_call_count), 0) AS calls, coalesce(sum(total_tokens), 0) AS tokens"
            " FROM sessions"
        )
        assert got["sessions"] == len(said), root
        assert got["messages"] == sum(len(m) for m, _ in said.values()) + errors, root
        calls = sum(1 for _, ps in said.values() for p in ps if p["type"] == "tool")
        assert got["calls"] == calls and got["tokens"] == tokens, root
        store.close()
    assert generations >= {"db", "json", "gen0"}
