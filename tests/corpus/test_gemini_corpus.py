"""Gemini CLI on every fixture home that holds its chats: no rejects, and sessions, messages,
tool calls and tokens equal a count made here, independently of the parser, from the files."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store

pytestmark = pytest.mark.corpus


def gemini_homes(corpus: Path) -> list[Path]:
    return sorted(h for h in (corpus / "homes").iterdir() if (h / ".gemini" / "tmp").is_dir())


def final_messages(path: Path) -> list[dict]:
    """The messages a file ends with: a document's list, or a log's last version of each id in
    its first place (the fixtures' logs have no `$rewindTo`, and `$set` only moves times)."""
    data = path.read_bytes()
    if path.suffix == ".json":
        return orjson.loads(data).get("messages", []) if data.strip() else []
    latest: dict[str, dict] = {}
    for line in data.split(b"\n"):
        record = orjson.loads(line) if line.strip() else {}
        assert "$rewindTo" not in record and "messages" not in record.get("$set", {})
        if "id" in record and "type" in record:
            latest[record["id"]] = record
    return list(latest.values())


def test_every_gemini_home_imports_whole(corpus: Path, tmp_path: Path) -> None:
    homes = gemini_homes(corpus)
    assert len(homes) >= 5
    for home in homes:
        files = sorted(p for p in (home / ".gemini" / "tmp").glob("*/chats/**/*.json*"))
        chats = {p: final_messages(p) for p in files}
        said = [m for messages in chats.values() for m in messages]
        store = open_store(tmp_path / f"{home.name}.db")
        report = sync(store, SyncOptions(sources={"gemini-cli": [home / ".gemini"]}, workers=0))
        assert report.ok and report.rejects == [], (home.name, report.rejects)
        (got,) = store.query(
            "SELECT count(*) AS sessions, coalesce(sum(message_count), 0) AS messages,"
            " coalesce(sum(tool_call_count), 0) AS calls, coalesce(sum(total_tokens), 0) AS tokens,"
            " coalesce(sum(reasoning_tokens), 0) AS thoughts FROM sessions"
        )
        # prompts logged for sessions with no chat file under the root come back on their own
        heads = {
            p.name.split("-")[-1].split(".")[0][:8] for p in files if p.name.startswith("session-")
        }
        logged: dict[str, int] = {}
        for log in (home / ".gemini" / "tmp").glob("*/logs.json"):
            for entry in orjson.loads(log.read_bytes()):
                if entry["sessionId"][:8] not in heads:
                    logged[entry["sessionId"]] = logged.get(entry["sessionId"], 0) + 1
        recorded = sum(1 for messages in chats.values() if messages)
        assert got["sessions"] == recorded + len(logged), home.name
        assert got["messages"] == len(said) + sum(logged.values()), home.name
        assert got["calls"] == sum(len(m.get("toolCalls") or []) for m in said), home.name
        tokens = [m["tokens"] for m in said if isinstance(m.get("tokens"), dict)]
        assert got["tokens"] == sum(t.get("total", 0) for t in tokens), home.name
        assert got["thoughts"] == sum(t.get("thoughts", 0) for t in tokens), home.name
        store.close()


def test_prompt_logs_bring_back_the_sessions_whose_chats_are_gone(
    corpus: Path, tmp_path: Path
) -> None:
    home = corpus / "homes" / "fabien-lessirard-dotfiles"
    store = open_store(tmp_path / "ledger.db")
    assert sync(store, SyncOptions(sources={"gemini-cli": [home / ".gemini"]}, workers=0)).ok
    (got,) = store.query(
        "SELECT count(*) AS n, sum(message_count) AS prompts FROM sessions"
        " WHERE source_session_id LIKE '%@logs'"
    )
    assert (got["n"], got["prompts"]) == (54, 832)  # 60 sessions logged, 6 with a chat file
    store.close()


def test_a_subagent_is_linked_to_the_session_that_ran_it(corpus: Path, tmp_path: Path) -> None:
    home = corpus / "homes" / "LAF-US-IDAHO-VAULT"
    store = open_store(tmp_path / "ledger.db")
    assert sync(store, SyncOptions(sources={"gemini-cli": [home / ".gemini"]}, workers=0)).ok
    rows = store.query(
        "SELECT c.source_session_id AS child, p.source_session_id AS parent FROM sessions c"
        " JOIN sessions p ON p.session_id = c.parent_session_id"
    )
    assert {(r["child"], r["parent"]) for r in rows} == {
        ("xs82vp", "b1f31681-4b57-4337-8bc5-ac73580f752a@2026-04-16T22-38")
    }
    store.close()
