"""The Cursor agent on every fixture home that holds its files: no rejects, one session per
conversation (twins merged), and prompts and tool calls equal a count made here from the files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store

pytestmark = pytest.mark.corpus


def cursor_homes(corpus: Path) -> list[Path]:
    return sorted(h for h in (corpus / "homes").iterdir() if (h / ".cursor").is_dir())


def conversations(cursor: Path) -> dict[str, dict[str, int]]:
    """Per conversation, its prompts and tool calls in the variant that has the most calls."""
    out: dict[str, dict[str, int]] = {}
    for path in cursor.glob("projects/*/agent-transcripts/**/*"):
        if path.suffix not in (".txt", ".json", ".jsonl") or "subagents" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".txt":
            lines = text.split("\n")
            counted = {"prompts": lines.count("user:"),
                       "calls": sum(line.startswith("[Tool call] ") for line in lines)}  # fmt: skip
        elif path.suffix == ".json":
            array = json.loads(text)
            counted = {"prompts": sum(r["role"] == "user" for r in array),
                       "calls": sum(len(r.get("toolCalls") or []) for r in array)}  # fmt: skip
        else:
            rows = [json.loads(line) for line in text.split("\n") if line.strip()]
            rows = [r for r in rows if "role" in r]
            counted = {"prompts": sum(r["role"] == "user" for r in rows),
                       "calls": sum(b["type"] == "tool_use" for r in rows
                                    for b in r["message"]["content"])}  # fmt: skip
        best = out.setdefault(path.stem, counted)
        if counted["calls"] > best["calls"]:
            out[path.stem] = counted
    for store in cursor.glob("chats/*/*/store.db"):
        conn = sqlite3.connect(f"file:{store}?mode=ro&immutable=1", uri=True)
        blobs = [json.loads(d) for (d,) in conn.execute("SELECT data FROM blobs")
                 if bytes(d)[:1] == b"{"]  # fmt: skip
        (meta,) = conn.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
        root_id = json.loads(bytes.fromhex(meta))["latestRootBlobId"]
        (root,) = conn.execute("SELECT data FROM blobs WHERE id = ?", (root_id,)).fetchone()
        conn.close()
        # every JSON blob of the fixtures is named once by the root; a reply still being written
        # is JSON inside the root itself
        inline = bytes(root).find(b'{"')
        if inline >= 0:
            text = bytes(root)[inline:].decode("utf-8", "replace")
            blobs.append(json.JSONDecoder().raw_decode(text)[0])
        out[store.parent.name] = {
            "prompts": sum(b["role"] == "user" for b in blobs),
            "calls": sum(p.get("type") == "tool-call" for b in blobs if b["role"] == "assistant"
                         for p in b["content"]),
        }  # fmt: skip
    return out


def test_every_cursor_agent_home_imports_whole(corpus: Path, tmp_path: Path) -> None:
    homes = cursor_homes(corpus)
    assert len(homes) >= 5
    for home in homes:
        expected = conversations(home / ".cursor")
        store = open_store(tmp_path / f"{home.name}.db")
        report = sync(store, SyncOptions(sources={"cursor-agent": [home / ".cursor"]}, workers=0))
        assert report.ok and report.rejects == [], (home.name, report.rejects)
        rows = store.query("SELECT source_session_id, tool_call_count, "
                           "(SELECT count(*) FROM messages m WHERE m.session_id = s.session_id"
                           " AND m.role = 'user') AS prompts FROM sessions s")  # fmt: skip
        got = {r["source_session_id"]: {"prompts": r["prompts"], "calls": r["tool_call_count"]}
               for r in rows}  # fmt: skip
        assert got == expected, home.name
        store.close()
