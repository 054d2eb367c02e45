"""OpenCode's records, read from any generation into one shape (README.md here).

A session is its info (the Gen 1 session JSON's fields; a Gen 2 row is renamed into them) and its
messages in creation order, each with its parts in creation order. Message and part ids are
ascending (`msg_`/`prt_` + clock), so sorting by id is sorting by creation. What a file or row
says that cannot be read is a problem naming it; the rest of the session is still read.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import orjson
import xxhash

from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.sqlite_snapshot import read
from tracehouse.parsers.kit.untrusted import decode_json, place, token

# Gen 2 session columns → the session JSON's keys (time and summary columns are nested there).
SESSION_COLUMNS = {"id": "id", "slug": "slug", "version": "version", "project_id": "projectID",
                   "directory": "directory", "parent_id": "parentID", "title": "title",
                   "share_url": "share_url", "agent": "agent", "model": "model", "cost": "cost",
                   "workspace_id": "workspaceID"}  # fmt: skip
TOKEN_COLUMNS = ("tokens_input", "tokens_output", "tokens_reasoning", "tokens_cache_read",
                 "tokens_cache_write")  # fmt: skip


@dataclass
class RawSession:
    info: dict[str, Any]
    messages: list[dict[str, Any]]  # each with "id" and "parts": [{"id", "type", …}]
    location: str  # where a problem is reported: a file, or `session <id>` in a database
    digest: str  # of everything read: the same bytes are the same session
    problems: list[tuple[str, str]] = field(default_factory=list)
    rollup: dict[str, Any] = field(default_factory=dict)  # Gen 2's session token columns


def load_json_session(path: str, generation: int) -> RawSession:
    """A Gen 0 or Gen 1 session file with its message and part files."""
    digest = xxhash.xxh3_128()
    problems: list[tuple[str, str]] = []
    info = _document(path, path, digest, problems) or {}
    sid = os.path.basename(path).removesuffix(".json")
    if generation == 1:  # storage/session/<project>/<ses>.json
        storage = os.path.dirname(os.path.dirname(os.path.dirname(path)))
        message_dir = os.path.join(storage, "message", sid)
        part_dirs = os.path.join(storage, "part")
    else:  # project/<p>/storage/session/info/<ses>.json
        session_dir = os.path.dirname(os.path.dirname(path))
        message_dir = os.path.join(session_dir, "message", sid)
        part_dirs = os.path.join(session_dir, "part", sid)
    messages = []
    for name in _json_names(message_dir):
        message = _document(os.path.join(message_dir, name), path, digest, problems)
        if message is None:
            continue
        message.setdefault("id", name.removesuffix(".json"))
        part_dir = os.path.join(part_dirs, str(message["id"]))
        parts = [_document(os.path.join(part_dir, n), path, digest, problems)
                 for n in _json_names(part_dir)]  # fmt: skip
        message["parts"] = [p for p in parts if p is not None]
        messages.append(message)
    info.setdefault("id", sid)
    return RawSession(info, messages, path, digest.hexdigest(), problems)


def session_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    cursor = conn.execute("SELECT * FROM session")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def session_stamps(conn: sqlite3.Connection) -> dict[str, str]:
    """Per session, what changes whenever any of its rows does: its own row's update time and the
    count and newest update time of its messages and parts (OpenCode stamps every write)."""
    stamps: dict[str, list[Any]] = {}
    for table in ("message", "part"):
        sql = f"SELECT session_id, count(*), max(time_updated) FROM {table} GROUP BY session_id"
        for sid, count, newest in read(conn, sql):
            stamps.setdefault(str(sid), []).extend([table, count, newest])
    return {sid: orjson.dumps(v).decode() for sid, v in stamps.items()}


def load_db_session(conn: sqlite3.Connection, row: dict[str, Any], path: str) -> RawSession:
    """One Gen 2 session row with its message and part rows (`data` is the Gen 1 JSON less its
    ids, which are columns)."""
    sid = str(row["id"])
    location = f"session {token(sid)}"
    digest = xxhash.xxh3_128(orjson.dumps(row, default=str))
    problems: list[tuple[str, str]] = []
    parts: dict[str, list[dict[str, Any]]] = {}
    part_sql = "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id"
    for pid, mid, data in read(conn, part_sql, (sid,)):
        digest.update(data.encode() if isinstance(data, str) else bytes(data or b""))
        part = _row_data(data, f"part {token(pid)}", problems)
        if part is not None:
            parts.setdefault(str(mid), []).append({**part, "id": pid})
    messages = []
    message_sql = "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY id"
    for mid, created, data in read(conn, message_sql, (sid,)):
        digest.update(data.encode() if isinstance(data, str) else bytes(data or b""))
        message = _row_data(data, f"message {token(mid)}", problems)
        if message is not None:
            message.setdefault("time", {"created": created})
            messages.append({**message, "id": mid, "parts": parts.get(str(mid), [])})
    info: dict[str, Any] = {key: row.get(column) for column, key in SESSION_COLUMNS.items()}
    info["time"] = {"created": row.get("time_created"), "updated": row.get("time_updated"),
                    "archived": row.get("time_archived")}  # fmt: skip
    info["summary"] = {k: row.get(f"summary_{k}") for k in ("additions", "deletions", "files")}
    if isinstance(info.get("model"), str):
        info["model"] = _row_data(info["model"], f"{location} model", problems)
    rollup = {c: row[c] for c in TOKEN_COLUMNS if row.get(c) is not None}
    return RawSession(info, messages, location, digest.hexdigest(), problems, rollup)


def _row_data(
    data: Any, where: str, problems: list[tuple[str, str]], *, document: bool = False
) -> dict[str, Any] | None:
    """A row's `data` cell, or a JSON file (`document`: a syntax error names its line)."""
    value: dict[str, Any] | None
    value, problem = decode_json(data)
    if problem is not None:
        spot = f"{where} {place(problem, '')}".strip() if document else where
        problems.append((spot, f"data is not a JSON object: {problem}"))
    return value


def _document(
    path: str, session_path: str, digest: Any, problems: list[tuple[str, str]]
) -> dict[str, Any] | None:
    where = os.path.relpath(path, os.path.dirname(session_path))
    try:
        data = read_file(path)
    except OSError as exc:
        problems.append((where, f"cannot read: {exc.strerror or exc}"))
        return None
    digest.update(os.path.basename(path).encode())
    digest.update(data)
    return _row_data(data, where, problems, document=True)


def _json_names(directory: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return []
