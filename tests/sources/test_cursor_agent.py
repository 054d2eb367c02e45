"""Cursor agent parser: the source suite on tests/data transcripts of every variant and a
`store.db` made here, then its rules: twins are one session, subagents pair with spawning calls,
the store is walked from its root, the workspace comes back from the slug or the md5."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import DATA
from tests.sources.suite import SourceSuite, backfill_twice, parse_all_items
from tracehouse.parsers import cursor_agent
from tracehouse.parsers.cursor_agent.builder import _absolute_paths

ROOT = DATA / "cursor_agent" / "home" / ".cursor"
A, B = "aaaaaaaa-1111-4111-8111-000000000001", "bbbbbbbb-2222-4222-8222-000000000002"
C, D = "cccccccc-3333-4333-8333-000000000003", "dddddddd-4444-4444-8444-000000000004"
AGENT = "eeeeeeee-5555-4555-8555-000000000005"
STORE_MESSAGES = [
    {"role": "system", "content": "You are a coding agent. The workspace is /home/dev/app."},
    {"role": "user", "content": [{"type": "text", "text": "list the tests"}]},
    {"id": "1", "role": "assistant", "content": [
        {"type": "reasoning", "text": "Look in tests/.", "signature": "sig"},
        {"type": "tool-call", "toolCallId": "call_1", "toolName": "LS",
         "args": {"path": "/home/dev/app/tests"}}]},
    {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_1",
                                  "toolName": "LS", "result": "test_a.py\ntest_b.py"}]},
    {"id": "1", "role": "assistant", "content": [{"type": "text", "text": "Two tests."}]},
    {"role": "user", "content": [{"type": "text", "text": "list the tests"}]},  # same bytes again
]  # fmt: skip


def _field(number: int, value: bytes) -> bytes:
    size, out = len(value), b""
    while True:
        byte, size = size & 0x7F, size >> 7
        out += bytes([byte | (0x80 if size else 0)])
        if not size:
            break
    return bytes([number << 3 | 2]) + out + value


def make_store(cursor_dir: Path, messages: list[dict], pending: dict | None = None) -> Path:
    """A CLI `store.db`: content-addressed blobs, a root naming the messages in order (field 1),
    a file-state node (field 2), and the reply being written inline (field 4)."""
    folder = cursor_dir / "chats" / hashlib.md5(b"/home/dev/app").hexdigest() / AGENT
    folder.mkdir(parents=True)
    conn = sqlite3.connect(folder / "store.db")
    conn.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    root = b""
    for message in messages:
        data = json.dumps(message).encode()
        digest = hashlib.sha256(data).digest()
        conn.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?)", (digest.hex(), data))
        root += _field(1, digest)
    node = b"\x0a\x03abc"
    conn.execute("INSERT INTO blobs VALUES (?, ?)", (hashlib.sha256(node).hexdigest(), node))
    root += _field(2, hashlib.sha256(node).digest())
    if pending is not None:
        root += _field(4, json.dumps(pending).encode())
    conn.execute("INSERT INTO blobs VALUES (?, ?)", (hashlib.sha256(root).hexdigest(), root))
    meta = {"agentId": AGENT, "latestRootBlobId": hashlib.sha256(root).hexdigest(),
            "name": "List the tests", "mode": "default", "createdAt": 1754635645568,
            "lastUsedModel": "gpt-5"}  # fmt: skip
    conn.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps(meta).encode().hex(),))
    conn.commit()
    conn.close()
    return folder / "store.db"


@pytest.fixture
def parser():
    return cursor_agent


@pytest.fixture
def home(tmp_path):
    root = tmp_path / ".cursor"
    shutil.copytree(ROOT, root)
    pending = {"id": "1", "role": "assistant", "content": [{"type": "text", "text": "Both pass"}]}
    make_store(root, STORE_MESSAGES, pending)
    return root


@pytest.fixture
def units(home):
    return cursor_agent.discover([home])


@pytest.fixture
def bad_unit(tmp_path):
    folder = tmp_path / ".cursor" / "projects" / "p" / "agent-transcripts"
    folder.mkdir(parents=True)
    good = (ROOT / "projects/home-dev-app/agent-transcripts" / B / f"{B}.jsonl").read_bytes()
    lines = good.split(b"\n")
    body = [lines[0], b"{not json", b"[1, 2]", b'{"type": "totally-new-record"}', *lines[1:]]
    (folder / f"{B}.jsonl").write_bytes(b"\n".join(body))
    (unit,) = cursor_agent.discover([tmp_path / ".cursor"])
    return unit


class TestCursorAgentContract(SourceSuite):
    reject_locations = (f"{B}.jsonl line ",)


def sessions(units) -> dict[str, tuple]:
    out = {}
    for unit in units:
        items, frames, rejects = parse_all_items(cursor_agent, unit)
        assert rejects == []
        for item in items:
            of = {n: f.filter(f["session_id"] == item.session_id).sort("seq")
                  for n, f in frames.items()}  # fmt: skip
            out[item.source_session_id] = (item, of)
    return out


def test_discovery_makes_one_unit_per_conversation(units) -> None:
    kinds = sorted((u.info["kind"], Path(u.key).name) for u in units)
    assert kinds == [("store", "store.db"), ("subagent", f"{C}.jsonl"),
                     ("transcript", A), ("transcript", B), ("transcript", D)]  # fmt: skip


def test_twins_are_one_session_each_turn_from_the_fuller_one(units) -> None:
    item, frames = sessions(units)[A]
    assert item.session["metadata"]["variants"] == "txt+flat"
    assert item.session["workspace_path"] == "/home/dev/app"
    assert item.session["title"] == "Why does the build fail?"
    # turns 1-2 from the .txt (it has the tool calls), turn 3 only the JSONL has
    assert frames["turns"]["source_turn_id"].to_list() == ["t0", "t1", "t2"]
    calls = frames["tool_calls"]
    assert calls["tool_name"].to_list() == ["Shell", "Read", "ApplyPatch"]
    assert json.loads(calls["params"][0]) == {"command": "npm run build",
                                              "working_directory": "/home/dev/app"}  # fmt: skip
    assert "*** Begin Patch" in calls["params"][2]
    messages = frames["messages"]
    assert messages["thinking"][1].startswith("**Reading the log**")
    assert messages["content"].to_list()[-1] == "They pass."


def test_a_subagent_pairs_with_its_spawning_call(units) -> None:
    found = sessions(units)
    _, frames = found[B]
    calls = frames["tool_calls"]
    assert calls["tool_name"].to_list() == ["Task", "rg", "ReadFile"]
    assert calls["spawned_source_session_id"].to_list() == [C, None, None]
    child, _ = found[C]
    assert child.session["is_subagent"] and child.session["parent_source_session_id"] == B
    assert child.session["task_description"] == "Grep the repo for API keys"
    assert child.session["workspace_path"] is None or child.session["project"] == "app"


def test_the_json_array_keeps_results_and_think_sections(units) -> None:
    _, frames = sessions(units)[D]
    messages = frames["messages"]
    assert messages["thinking"][1] == "Il faut d'abord vérifier le dossier."
    assert messages["content"][1] == "Création du projet :"
    assert frames["tool_calls"]["tool_name"].to_list() == ["run_terminal_cmd", "list_dir"]


def test_the_store_is_walked_from_its_root(units) -> None:
    item, frames = sessions(units)[AGENT]
    session = item.session
    assert session["title"] == "List the tests" and session["model"] == "gpt-5"
    assert session["workspace_path"] == "/home/dev/app"  # md5 of the chats directory
    assert session["created_at"].startswith("2025-08-08")
    messages = frames["messages"]
    assert messages["role"].to_list() == ["user", "assistant", "assistant", "user", "assistant"]
    # a prompt repeated word for word is its own message, though it is one blob
    assert messages["content"].to_list()[3] == "list the tests"
    assert messages["content"].to_list()[4] == "Both pass"  # the reply still being written
    assert json.loads(messages["context"][0]) == {"system": STORE_MESSAGES[0]["content"]}
    calls = frames["tool_calls"]
    assert calls["source_tool_call_id"].to_list() == ["call_1"]
    assert calls["result"].to_list() == ["test_a.py\ntest_b.py"]


def test_backfill_links_and_a_rerun_writes_nothing(home, tmp_path) -> None:
    assert backfill_twice("cursor-agent", home, tmp_path / "ledger.db") == (5, 1)


def test_a_windows_workspace_named_in_a_tool_input_keeps_its_backslashes(tmp_path) -> None:
    # Cursor files C:\Users\dev\app under the slug `c-Users-dev-app`; the path appears only in a
    # tool input, where the transcript's JSON escapes each backslash.
    folder = tmp_path / ".cursor" / "projects" / "c-Users-dev-app" / "agent-transcripts"
    folder.mkdir(parents=True)
    call = {"type": "tool_use", "name": "ReadFile", "input": {"path": "C:\\Users\\dev\\app\\a.py"}}
    lines = [
        {"role": "user", "message": {"content": [{"type": "text", "text": "read a.py"}]}},
        {"role": "assistant", "message": {"content": [call]}},
    ]
    (folder / f"{A}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (item, _frames) = sessions(cursor_agent.discover([tmp_path / ".cursor"]))[A]
    assert item.session["workspace_path"] == "C:\\Users\\dev\\app"
    assert item.session["project"] == "app"


@given(st.text(alphabet='aZ:/\\ "|é\n', max_size=24))
def test_absolute_paths_are_those_a_drive_led_pattern_finds(text: str) -> None:
    # The pattern the scan replaced: every path, with its drive letter when one leads it.
    reference = re.findall(r"(?:[A-Za-z]:)?[\\/][^\s\"'`<>|*?]+", text)
    assert list(_absolute_paths(text)) == reference


def test_no_time_or_token_is_made_up(units, home, tmp_path) -> None:
    """Transcripts record no time and no variant records tokens: the session's times and token
    counts are NULL (flagged), not a file's modification time or 0 — so a copy that gives every
    file a new mtime changes nothing, no `--since` window takes the session, and `sessions
    show` says the tokens were not recorded."""
    from typer.testing import CliRunner

    from tracehouse.cli.app import app
    from tracehouse.store import open_store

    found = sessions(units)
    item, _ = found[A]
    assert item.session["created_at"] is None and item.session["updated_at"] is None
    assert item.session["metadata"]["times"] == "none recorded"
    assert found[AGENT][0].session["created_at"].startswith("2025-08-08")  # the store has one
    for session, of in found.values():
        assert all(session.session[c] is None for c in ("input_tokens", "total_tokens"))
        assert of["turns"]["input_tokens"].null_count() == len(of["turns"])
    store = tmp_path / "ledger.db"
    runner = CliRunner()
    args = ["sync", "backfill", "--source", f"cursor-agent={home}", "--store", str(store)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    ledger = open_store(store)
    labels = {r["source_session_id"]: r["label"] for r in ledger.query("SELECT * FROM sessions")}
    ledger.close()
    shown = runner.invoke(app, ["sessions", "show", labels[A], "--store", str(store)]).output
    assert "tokens     not recorded by cursor-agent" in shown
    assert "time       ? → ?" in shown
    recent = runner.invoke(
        app, ["sessions", "list", "--since", "2020-01-01", "--json", "--store", str(store)]
    )
    assert labels[A] not in recent.output and labels[AGENT] in recent.output
