"""The agents read through the parser kit, on every fixture home that holds their logs:
each home imports with no rejects, and sessions, prompts and replies, tool calls and tokens
equal a count made here from the files themselves, independently of the parsers."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store

pytestmark = pytest.mark.corpus


def ledger_counts(provider: str, roots: list[Path], tmp_path: Path) -> dict[str, int | None]:
    """Backfill `roots` through the whole pipeline; the ledger's own counts."""
    store = open_store(tmp_path / f"{provider}.db")
    report = sync(store, SyncOptions(sources={provider: roots}, workers=0))
    assert report.ok and not report.rejects, report.rejects
    (row,) = store.query(
        "SELECT count(*) AS sessions, sum(input_tokens) AS input, sum(output_tokens) AS output,"
        " (SELECT count(*) FROM messages WHERE role = 'user') AS prompts,"
        " (SELECT count(*) FROM messages WHERE role = 'assistant') AS replies,"
        " (SELECT count(*) FROM tool_calls) AS calls FROM sessions"
    )
    store.close()
    return dict(row)


def lines(path: Path) -> Iterator[dict]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def homes(corpus: Path, pattern: str) -> list[Path]:
    return sorted({h for h in (corpus / "homes").iterdir() if any(h.glob(pattern))})


def test_pi(corpus: Path, tmp_path: Path) -> None:
    roots = [h / ".pi" / "agent" for h in homes(corpus, ".pi/agent/sessions/*/*.jsonl")]
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": 0, "output": 0}
    for file in (f for r in roots for f in r.glob("sessions/*/*.jsonl")):
        messages = [r["message"] for r in lines(file) if r["type"] == "message"]
        want["sessions"] += any(m["role"] == "user" for m in messages)
        want["prompts"] += sum(m["role"] == "user" for m in messages)
        want["replies"] += sum(m["role"] == "assistant" for m in messages)
        for m in messages:
            want["calls"] += sum(p.get("type") == "toolCall" for p in m.get("content") or [])
            usage = m.get("usage") or {}
            want["input"] += sum(usage.get(k, 0) for k in ("input", "cacheRead", "cacheWrite"))
            want["output"] += usage.get("output", 0)
    assert ledger_counts("pi", roots, tmp_path) == want


def test_kimi_cli(corpus: Path, tmp_path: Path) -> None:
    roots = [h / ".kimi" for h in homes(corpus, ".kimi/sessions")]
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": 0, "output": 0}
    for folder in (f for r in roots for f in r.glob("sessions/*/*")):
        wire = folder / "wire.jsonl"
        if wire.exists():
            events = [r["message"] for r in lines(wire) if "message" in r]
            want["sessions"] += 1
            want["prompts"] += sum(e["type"] == "TurnBegin" for e in events)
            steps = [[]]  # content parts per step: one reply each
            for e in events:
                if e["type"] in ("StepBegin", "TurnBegin"):
                    steps.append([])
                elif e["type"] == "ContentPart":
                    steps[-1].append(e)
            want["replies"] += sum(1 for s in steps if s)
            # a result whose call came before the log was cut still says a call was made
            want["calls"] += len({e["payload"].get("id") for e in events if e["type"] == "ToolCall"}
                                 | {e["payload"].get("tool_call_id") for e in events
                                    if e["type"] == "ToolResult"})  # fmt: skip
            for e in events:
                usage = e["payload"].get("token_usage") or {}
                want["input"] += sum(
                    usage.get(k, 0)
                    for k in ("input_other", "input_cache_read", "input_cache_creation")
                )
                want["output"] += usage.get("output", 0)
        contexts = [folder / "context.jsonl"] if not wire.exists() else []
        for context in [*contexts, *folder.glob("context_sub_*.jsonl")]:
            if not context.exists():
                continue
            records = list(lines(context))
            want["sessions"] += any(r["role"] in ("user", "assistant") for r in records)
            want["prompts"] += sum(r["role"] == "user" for r in records)
            want["replies"] += sum(r["role"] == "assistant" for r in records)
            want["calls"] += sum(len(r.get("tool_calls") or []) for r in records)
    got = ledger_counts("kimi-cli", roots, tmp_path)
    assert {**got, "input": got["input"] or 0, "output": got["output"] or 0} == want


def test_qwen_code(corpus: Path, tmp_path: Path) -> None:
    roots = [h / ".qwen" for h in homes(corpus, ".qwen")]
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": 0, "output": 0}
    chats = {f.stem: f for r in roots for f in r.glob("projects/*/chats/*.jsonl")}
    for chat in chats.values():
        records = list(lines(chat))
        events = [((r.get("systemPayload") or {}).get("uiEvent") or {}) for r in records]
        calls = [e for e in events if e.get("event.name") == "qwen-code.api_response"]
        want["sessions"] += 1
        want["prompts"] += sum(
            r["type"] == "user"
            or (
                r.get("subtype") == "slash_command"
                and r["systemPayload"].get("phase") == "invocation"
            )
            for r in records
        )
        want["replies"] += sum(r["type"] == "assistant" for r in records)
        want["calls"] += sum("functionCall" in p for r in records if r["type"] == "assistant"
                             for p in r["message"]["parts"])  # fmt: skip
        want["input"] += sum(e["input_token_count"] for e in calls)
        want["output"] += sum(e["output_token_count"] for e in calls)
    for log in (f for r in roots for f in r.glob("tmp/*/logs.json")):
        logged = [e for e in json.loads(log.read_text()) if e["sessionId"] not in chats]
        want["sessions"] += len({e["sessionId"] for e in logged})
        want["prompts"] += len(logged)
    assert ledger_counts("qwen-code", roots, tmp_path) == want


def test_copilot_cli(corpus: Path, tmp_path: Path) -> None:
    roots = [h / ".copilot" for h in homes(corpus, ".copilot/*session-state")]
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": 0, "output": 0}
    logs = [f for r in roots for f in [*r.glob("session-state/*.jsonl"),
                                        *r.glob("session-state/*/events.jsonl")]]  # fmt: skip
    for log in logs:
        events = list(lines(log))
        prompts = sum(e["type"] == "user.message" for e in events)
        want["sessions"] += prompts > 0
        want["prompts"] += prompts
        want["replies"] += sum(e["type"] == "assistant.message" for e in events)
        ids = {e["data"]["toolCallId"] for e in events if e["type"] == "tool.execution_start"}
        ids |= {t["toolCallId"] for e in events if e["type"] == "assistant.message"
                for t in e["data"].get("toolRequests") or []}  # fmt: skip
        want["calls"] += len(ids)
        for e in events:
            if e["type"] == "assistant.message":
                want["output"] += e["data"].get("outputTokens") or 0
            if e["type"] == "session.shutdown":  # the totals: what the replies said, and more
                usage = [m["usage"] for m in e["data"]["modelMetrics"].values()]
                want["input"] += sum(u["inputTokens"] for u in usage)
                said = sum(x["data"].get("outputTokens") or 0 for x in events
                           if x["type"] == "assistant.message")  # fmt: skip
                want["output"] += sum(u["outputTokens"] for u in usage) - said
    for document in (f for r in roots for f in r.glob("history-session-state/*.json")):
        timeline = json.loads(document.read_text())["timeline"]
        prompts = sum(t["type"] == "user" for t in timeline)
        want["sessions"] += prompts > 0
        want["prompts"] += prompts
        want["replies"] += sum(t["type"] == "copilot" for t in timeline)
        want["calls"] += sum(t["type"] == "tool_call_completed" for t in timeline)
    got = ledger_counts("copilot-cli", roots, tmp_path)
    assert {**got, "input": got["input"] or 0} == want


def test_cline(corpus: Path, tmp_path: Path) -> None:
    tasks = sorted((corpus / "homes").glob("*/.config/*/User/globalStorage/*/tasks/*"))
    roots = sorted({t.parent.parent for t in tasks})
    want = {"sessions": len(tasks), "prompts": 0, "replies": 0, "calls": 0, "input": 0,
            "output": 0}  # fmt: skip
    for task in tasks:
        for m in json.loads((task / "ui_messages.json").read_text()):
            kind, text = m.get("say") or m.get("ask"), m.get("text") or ""
            want["prompts"] += kind == "user_feedback" or (
                kind == "text" and m is not None and m["ts"] == int(task.name)
            )
            has_text = bool(text.strip())
            want["replies"] += has_text and (
                (kind in ("reasoning", "completion_result") and m["type"] == "say")
                or (kind == "text" and m["ts"] != int(task.name))
                or kind == "followup"
            )
            want["calls"] += has_text and kind in ("tool", "command")
            if kind == "api_req_started":
                request = json.loads(text)
                want["input"] += request.get("tokensIn", 0) + request.get("cacheReads", 0) + \
                    request.get("cacheWrites", 0)  # fmt: skip
                want["output"] += request.get("tokensOut", 0)
    assert ledger_counts("cline", roots, tmp_path) == want


def test_crush(corpus: Path, tmp_path: Path) -> None:
    databases = sorted((corpus / "homes").glob("*/projects/*/.crush/crush.db"))
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": None,
            "output": None}  # fmt: skip
    for db in databases:  # a private copy of all three files: opening in place loses the WAL
        copy = tmp_path / "copies" / db.parent.parent.name / "crush.db"
        copy.parent.mkdir(parents=True)
        for suffix in ("", "-wal", "-shm"):
            shutil.copyfile(f"{db}{suffix}", f"{copy}{suffix}")
        conn = sqlite3.connect(copy)
        (n,) = conn.execute("SELECT count(DISTINCT session_id) FROM messages").fetchone()
        want["sessions"] += n
        for role, parts in conn.execute("SELECT role, parts FROM messages"):
            want["prompts"] += role == "user"
            want["replies"] += role == "assistant"
            want["calls"] += sum(p["type"] == "tool_call" for p in json.loads(parts))
        conn.close()
    roots = sorted({db.parent.parent.parent for db in databases})
    assert ledger_counts("crush", roots, tmp_path) == want


def test_aider(corpus: Path, tmp_path: Path) -> None:
    histories = sorted((corpus / "homes").glob("*/projects/*/.aider.chat.history.md"))
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": 0, "output": 0}
    for history in histories:
        text = history.read_text(encoding="utf-8")
        for launch in re.split(r"^# aider chat started at .*$", text, flags=re.M)[1:]:
            rows = launch.split("\n")
            # a block: lines of one kind in a row (a reply may hold blank lines); aider quotes
            # its own output as "> text" (">" alone when blank), while a reply's edit ends with
            # its own ">>>>>>> REPLACE"
            quoted = [r.startswith("> ") or r.rstrip() == ">" for r in rows]
            kinds = ["prompt" if r.startswith("####") else "output" if q else "reply"
                     for r, q in zip(rows, quoted, strict=True)]  # fmt: skip
            runs: list[tuple[str, list[str]]] = []
            for kind, row in zip(kinds, rows, strict=True):
                if runs and runs[-1][0] == kind:
                    runs[-1][1].append(row)
                else:
                    runs.append((kind, [row]))
            prompts = sum(kind == "prompt" for kind, _ in runs)
            if not prompts:
                continue
            want["sessions"] += 1
            want["prompts"] += prompts
            want["replies"] += sum(kind == "reply" and any(r.strip() for r in block)
                                   for kind, block in runs)  # fmt: skip
            want["calls"] += sum(bool(re.match(r"> (Applied edit to |Commit [0-9a-f]{7,} )", r))
                                 for r in rows)  # fmt: skip
            for sent, received in re.findall(r"> Tokens: ([\d.]+k?) sent.*?([\d.]+k?) received",
                                             launch):  # fmt: skip
                want["input"] += _rounded(sent)
                want["output"] += _rounded(received)
    roots = sorted({h.parent.parent.parent for h in histories})
    assert ledger_counts("aider", roots, tmp_path) == want


def _rounded(count: str) -> int:
    """Aider's printed count (`9.4k`) as the number it stands for."""
    return round(float(count.rstrip("k")) * (1000 if count.endswith("k") else 1))


def test_continue(corpus: Path, tmp_path: Path) -> None:
    roots = [h / ".continue" for h in homes(corpus, ".continue/sessions/*.json")]
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": None,
            "output": None}  # fmt: skip
    for file in (f for r in roots for f in r.glob("sessions/*.json") if f.name != "sessions.json"):
        thought = False
        for entry in json.loads(file.read_text(encoding="utf-8"))["history"]:
            message = entry["message"]
            content = message.get("content")
            text = content if isinstance(content, str) else "".join(
                p.get("text", "") for p in content or [] if p.get("type") == "text")  # fmt: skip
            if message["role"] == "user":
                want["prompts"] += 1
            elif message["role"] == "thinking":
                thought = thought or bool(text.strip())
            elif message["role"] == "assistant":
                said = re.sub(r"\A\s*<think>.*?</think>\s*", "", text, flags=re.S)
                calls = len(message.get("toolCalls") or [])
                want["replies"] += bool(said.strip() or calls or thought)
                want["calls"] += calls
                thought = False
        want["sessions"] += 1  # every file holds a prompt
    assert ledger_counts("continue", roots, tmp_path) == want


def test_openhands(corpus: Path, tmp_path: Path) -> None:
    conversations = sorted((corpus / "homes").glob("*/.openhands/sessions/*/metadata.json"))
    roots = sorted({c.parent.parent.parent for c in conversations})
    want = {"sessions": len(conversations), "prompts": 0, "replies": 0, "calls": 0, "input": 0,
            "output": 0}  # fmt: skip
    for conversation in conversations:
        meta = json.loads(conversation.read_text())
        want["input"] += meta["prompt_tokens"]  # the conversation's totals
        want["output"] += meta["completion_tokens"]
        for event in (json.loads(e.read_text()) for e in conversation.parent.glob("events/*.json")):
            action = event.get("action")
            want["prompts"] += action == "message" and event["source"] == "user"
            made = "tool_call_metadata" in event and action is not None
            want["replies"] += (action == "message" and event["source"] == "agent") or made
            want["calls"] += made
    assert ledger_counts("openhands", roots, tmp_path) == want


def test_zed(corpus: Path, tmp_path: Path) -> None:
    import zstandard

    databases = sorted((corpus / "homes").glob("*/.local/share/zed/threads/threads.db"))
    roots = [db.parent.parent for db in databases]
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": None,
            "output": None}  # fmt: skip
    for db in databases:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            for kind, data in conn.execute("SELECT data_type, data FROM threads"):
                if kind == "zstd":
                    data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
                messages = json.loads(data)["messages"]
                want["sessions"] += 1
                want["prompts"] += sum("User" in m for m in messages)
                want["replies"] += sum("Agent" in m for m in messages)
                want["calls"] += sum("ToolUse" in p for m in messages if "Agent" in m
                                     for p in m["Agent"]["content"])  # fmt: skip
    assert ledger_counts("zed", roots, tmp_path) == want


def test_warp(corpus: Path, tmp_path: Path) -> None:
    databases = sorted((corpus / "homes").glob("*/.local/state/warp-terminal/warp.sqlite"))
    roots = [db.parent for db in databases]
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": None,
            "output": None}  # fmt: skip
    for db in databases:  # a private copy with its WAL: opening in place loses it
        copy = tmp_path / "copies" / db.parent.parent.parent.parent.name / "warp.sqlite"
        copy.parent.mkdir(parents=True)
        for suffix in ("", "-wal"):
            if Path(f"{db}{suffix}").exists():
                shutil.copyfile(f"{db}{suffix}", f"{copy}{suffix}")
        with sqlite3.connect(copy) as conn:
            asked = conn.execute("SELECT conversation_id, input FROM ai_queries").fetchall()
            want["sessions"] += len({c for c, given in asked if "Query" in given})
            want["prompts"] += sum("Query" in given for _, given in asked)
            want["calls"] += conn.execute("SELECT count(*) FROM blocks WHERE json_extract("
                                          "ai_metadata, '$.conversation_id') IS NOT NULL"
                                          ).fetchone()[0]  # fmt: skip
    assert ledger_counts("warp", roots, tmp_path) == want


def test_goose(corpus: Path, tmp_path: Path) -> None:
    """The real database holds one session and no message: nothing to import, no reject."""
    databases = sorted((corpus / "homes").glob("*/.local/share/goose/sessions/sessions.db"))
    roots = [db.parent.parent for db in databases]
    want = {"sessions": 0, "prompts": 0, "replies": 0, "calls": 0, "input": None,
            "output": None}  # fmt: skip
    for db in databases:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            for (content,) in conn.execute("SELECT content_json FROM messages"):
                want["calls"] += content.count('"toolRequest"')
            want["sessions"] += conn.execute("SELECT count(DISTINCT session_id) FROM"
                                             " messages").fetchone()[0]  # fmt: skip
    assert databases and ledger_counts("goose", roots, tmp_path) == want
