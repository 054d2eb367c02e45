"""The Cursor agent CLI's resumable store, `chats/<md5(cwd)>/<agentId>/store.db` (README.md here).

`blobs(id, data)` is content-addressed (`id = sha256(data)`); `meta` key `"0"` is hex-encoded JSON
naming the agent, its title and its latest root blob. The root is a protobuf message whose field 1
repeats, in conversation order, the ids of the message blobs (AI-SDK JSON: `system`, `user`,
`assistant` with `text`/`reasoning`/`tool-call` parts, `tool` with `tool-result` parts); field 4,
when present, is the reply being written, inline. Other fields name file-state nodes, which are
not the conversation. A store whose root cannot be walked falls back to its JSON blobs in rowid
order, and says so in the session's metadata.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson
import xxhash

from tracehouse.parsers.cursor_agent.transcripts import Reply, Tool, Transcript
from tracehouse.parsers.kit.sqlite_snapshot import read
from tracehouse.parsers.kit.untrusted import blob, decode_json, token

MESSAGE_IDS, PENDING = 1, 4


@dataclass
class Store:
    meta: dict[str, Any]
    messages: list[dict[str, Any]]  # AI-SDK messages in conversation order
    ordered: bool  # False: the root could not be walked, blobs are in rowid order
    digest: str
    problems: list[tuple[str, str]] = field(default_factory=list)
    accounting: Counter[str] = field(default_factory=Counter)


def load(conn: sqlite3.Connection) -> Store:
    problems: list[tuple[str, str]] = []
    meta: dict[str, Any] = {}
    for key, value in read(conn, "SELECT key, value FROM meta"):
        decoded, problem = _meta_value(value)
        if problem is not None:
            problems.append((f"meta {token(key)}", f"not hex-encoded JSON ({problem})"))
            continue
        meta.update(decoded)
    blobs: dict[str, bytes] = {}
    refused: set[str] = set()
    for blob_id, cell in read(conn, "SELECT id, data FROM blobs ORDER BY rowid"):
        data, problem = blob(cell)
        if data is None:
            problems.append((f"blob {token(blob_id)}", str(problem)))
            refused.add(f"blob {token(blob_id)}")
            continue
        blobs[str(blob_id)] = data
    digest = xxhash.xxh3_128(orjson.dumps(meta, default=str))
    order = _walk(blobs.get(str(meta.get("latestRootBlobId") or "")), blobs)
    out = Store(meta, [], order is not None, "", problems)
    if order is None:  # no root to walk: the JSON blobs, in the order they were stored
        order = [(f"blob {token(i)}", d) for i, d in blobs.items() if d[:1] == b"{"]
        out.accounting["unordered"] += 1
    for where, data in order:
        if not data:
            if where not in refused:  # a blob of another type is its own reject already
                problems.append((where, "the root names this blob, which is not stored"))
            continue
        digest.update(data)
        message, problem = decode_json(data)
        if problem is not None:
            problems.append((where, f"not a message ({problem})"))
            continue
        out.messages.append(message)
        out.accounting[f"message.{message.get('role')}"] += 1
    out.accounting["file-state node"] += sum(1 for d in blobs.values() if d[:1] != b"{") - 1
    out.digest = digest.hexdigest()
    return out


def _meta_value(value: Any) -> tuple[Any, str | None]:
    """A `meta` value: hex text of a JSON object (a BLOB of the JSON itself is read too)."""
    if isinstance(value, str):
        try:
            value = bytes.fromhex(value)
        except ValueError as exc:
            return None, str(exc)
    return decode_json(value)


def _walk(root: bytes | None, blobs: dict[str, bytes]) -> list[tuple[str, bytes]] | None:
    """(where, JSON) of the messages the root names, in order, with the pending reply last; None
    when the root is missing or is not the protobuf this reads."""
    if root is None:
        return None
    try:
        fields = _fields(root)
    except (IndexError, ValueError):
        return None
    out = []
    for number, value in fields:
        if number == MESSAGE_IDS:
            where = f"blob {value.hex()}"
            out.append((where, blobs.get(value.hex(), b"")))
        elif number == PENDING:
            out.append(("pending reply", value))
    return out or None


def _fields(data: bytes) -> list[tuple[int, bytes]]:
    """The length-delimited fields of a protobuf message (others are skipped)."""
    out, i = [], 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, i = _varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise ValueError("field runs past the end")
            out.append((number, data[i : i + size]))
            i += size
        else:
            raise ValueError(f"wire type {wire}")
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i
        if shift > 63:
            raise ValueError("varint too long")


def transcript(store: Store) -> Transcript:
    """The store's AI-SDK messages as a transcript: tool results join their calls by id."""
    out = Transcript("store", problems=store.problems, accounting=store.accounting)
    calls: dict[str, Tool] = {}
    for index, message in enumerate(store.messages):
        role, content = message.get("role"), message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(parts, list):
            out.problems.append((f"message {index}", "content is neither text nor parts"))
            continue
        if role == "system":
            out.system = "\n\n".join(str(p.get("text") or "") for p in parts)
            continue
        if role == "tool":
            for part in parts:
                call = calls.get(str(part.get("toolCallId")))
                if call is None:
                    out.accounting["unmatched result"] += 1
                    continue
                call.has_result, call.result = True, part.get("result")
            continue
        reply = Reply("user" if role == "user" else "assistant")
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                reply.text = "\n\n".join(filter(None, (reply.text, str(part.get("text") or ""))))
            elif kind == "reasoning" and part.get("text"):
                reply.thinking = "\n\n".join(filter(None, (reply.thinking, str(part["text"]))))
            elif kind == "tool-call":
                call = Tool(str(part.get("toolName") or "tool"), part.get("args"),
                            id=str(part.get("toolCallId") or "") or None)  # fmt: skip
                reply.tools.append(call)
                calls[call.id or ""] = call
        out.add(reply)
    return out
