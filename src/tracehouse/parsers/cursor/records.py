"""The chat records of a `state.vscdb`, generation by generation (FORMATS §3.2), as
`Conversation`s: one composer or chat tab with its bubbles in conversation order.

Only chat keys are read: `cursorDiskKV` rows under `composerData:` and `bubbleId:`, and the
`ItemTable` keys named below. Auth and settings rows are never selected. Keys are read by range
(`key >= 'p' AND key < 'q'`) so the unique index on `key` is used.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

import orjson
import xxhash

from tracehouse.parsers.base import SHAPE_ERRORS, shape_error
from tracehouse.parsers.kit.sqlite_snapshot import read
from tracehouse.parsers.kit.untrusted import decode_json, digest_bytes, items, mapping

CHAT_TABS = "workbench.panel.aichat.view.aichat.chatdata"  # C0
WORKSPACE_COMPOSERS = "composer.composerData"  # C1 inline, C4 heads
GLOBAL_HEADERS = "composer.composerHeaders"  # C5 heads
COMPOSER = "composerData:"
BUBBLE = "bubbleId:"


@dataclass
class Conversation:
    source_id: str  # composerId, or a chat tab's tabId
    kind: str  # "composer" | "chat"
    generation: str  # C0 … C5
    data: dict[str, Any]  # the composer or tab, as stored
    bubbles: list[dict[str, Any]]  # in conversation order
    location: str  # the key it was read from
    digest: str = ""  # hash of the raw values: unchanged digest, nothing to import
    problems: list[tuple[str, str]] = field(default_factory=list)  # (location, reason)
    # (path, workspace id) for a global composer; None: the unit's own workspace, if any
    workspace: tuple[str | None, str | None] | None = None


def upper(prefix: str) -> str:
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def item_value(conn: sqlite3.Connection, key: str) -> Any:
    rows = read(conn, "SELECT value FROM ItemTable WHERE key = ?", (key,))
    return rows[0][0] if rows and rows[0][0] is not None else None


def max_rowids(conn: sqlite3.Connection) -> dict[str, int]:
    out = {}
    for table in ("ItemTable", "cursorDiskKV"):
        rows = read(conn, f"SELECT max(rowid) FROM {table}")
        out[table] = int(rows[0][0] or 0) if rows else 0
    return out


def touched_composers(conn: sqlite3.Connection, since: int) -> set[str]:
    """Composers with a row written after rowid `since` (REPLACE gives a new rowid)."""
    found = set()
    for (key,) in read(conn, "SELECT key FROM cursorDiskKV WHERE rowid > ?", (since,)):
        if isinstance(key, str) and key.startswith(COMPOSER):
            found.add(key[len(COMPOSER) :])
        elif isinstance(key, str) and key.startswith(BUBBLE):
            found.add(key[len(BUBBLE) :].split(":", 1)[0])
    return found


def all_composer_ids(conn: sqlite3.Connection) -> list[str]:
    rows = read(
        conn,
        "SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ? AND value IS NOT NULL",
        (COMPOSER, upper(COMPOSER)),
    )
    return sorted(key[len(COMPOSER) :] for (key,) in rows)


@dataclass
class RawComposer:
    """A global composer's stored values, read but not decoded: enough to tell if it changed."""

    cid: str
    value: str | bytes
    bubbles: list[tuple[str, str | bytes]]  # (key, value) in key order, deleted rows left out
    digest: str


def read_composer(conn: sqlite3.Connection, cid: str) -> RawComposer | None:
    """A composer of the global DB and its bubble rows; None if it was deleted."""
    rows = read(conn, "SELECT value FROM cursorDiskKV WHERE key = ?", (COMPOSER + cid,))
    if not rows or rows[0][0] is None:
        return None
    prefix = f"{BUBBLE}{cid}:"
    bubbles = [
        (key, value)
        for key, value in read(
            conn,
            "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY key",
            (prefix, upper(prefix)),
        )
        if value is not None
    ]
    digest = xxhash.xxh3_64()
    for part in (rows[0][0], *(p for kv in bubbles for p in kv)):
        digest.update(digest_bytes(part))
    return RawComposer(cid, rows[0][0], bubbles, digest.hexdigest())


def global_composer(raw: RawComposer) -> Conversation:
    """C2 composers carry their conversation inline; C3–C5 split it into bubble rows. A composer
    of an unexpected shape comes back empty, with the reason among its problems."""
    try:
        return _global_composer(raw)
    except SHAPE_ERRORS as exc:
        conv = Conversation(raw.cid, "composer", "?", {}, [], COMPOSER + raw.cid, raw.digest)
        conv.problems.append((conv.location, shape_error(exc)))
        return conv


def _global_composer(raw: RawComposer) -> Conversation:
    location = COMPOSER + raw.cid
    data, problem = decode_json(raw.value)
    if problem is not None:
        conv = Conversation(raw.cid, "composer", "?", {}, [], location, raw.digest)
        conv.problems.append((location, f"not a composer: {problem}"))
        return conv
    conv = Conversation(raw.cid, "composer", generation_of(data), data, [], location, raw.digest)
    if data.get("fullConversationHeadersOnly") or not data.get("conversation"):
        _split_bubbles(raw, conv)
    else:
        conv.bubbles = [b for b in items(data["conversation"]) if isinstance(b, dict)]
    return conv


def _split_bubbles(raw: RawComposer, conv: Conversation) -> None:
    """C3+: bubbles are rows `bubbleId:<cid>:<bid>`, ordered by the composer's headers, not by
    rowid or key. A row the headers do not list (an error notice, seen in 2026 DBs) is placed by
    its `createdAt` among the listed ones."""
    prefix = f"{BUBBLE}{conv.source_id}:"
    stored: dict[str, dict[str, Any]] = {}
    for key, value in raw.bubbles:
        bubble, problem = decode_json(value)
        if problem is not None:
            conv.problems.append((key, f"not a bubble: {problem}"))
            continue
        stored[key[len(prefix) :]] = {**bubble, "_key": key}
    inline = mapping(conv.data.get("conversationMap"))
    ordered: list[dict[str, Any]] = []
    for header in items(conv.data.get("fullConversationHeadersOnly")):
        bid = str(header.get("bubbleId")) if isinstance(header, dict) else ""
        bubble = stored.pop(bid, None) or inline.get(bid)
        if bubble is None:
            conv.problems.append((f"{prefix}{bid}", "listed in the composer's headers, no row"))
            # Cursor writes the headers before the rows: a composer read in between (sync
            # live) must still shape its turns as the headers do, or a turn keyed by the answer
            # would outlive the question's row arriving. A placeholder holds the place.
            kind = header.get("type") if isinstance(header, dict) else None
            bubble = {"bubbleId": bid, "type": kind, "_missing": True}
        ordered.append(bubble)
    for bubble in sorted(stored.values(), key=lambda b: str(b.get("createdAt") or "")):
        at = str(bubble.get("createdAt") or "")
        place = next(
            (i for i, b in enumerate(ordered) if at and str(b.get("createdAt") or "") > at),
            len(ordered),
        )
        ordered.insert(place, {**bubble, "_unlisted": True})
    conv.bubbles = ordered


def generation_of(data: dict[str, Any]) -> str:
    version = data.get("_v")
    if not isinstance(version, int):
        return "C2"
    if version < 10:
        return "C3"
    if version < 16:
        return "C4"
    return "C5"


def workspace_conversations(conn: sqlite3.Connection) -> list[Conversation]:
    """C0 chat tabs and C1 composers with their conversation inline, from a workspace DB."""
    found: list[Conversation] = []
    for key, generation in ((CHAT_TABS, "C0"), (WORKSPACE_COMPOSERS, "C1")):
        raw = item_value(conn, key)
        if raw is None:
            continue
        data, problem = decode_json(raw)
        if problem is not None:
            broken = Conversation(key, "chat", generation, {}, [], key)
            broken.problems.append((key, problem))
            found.append(broken)
            continue
        if generation == "C0":
            entries, id_key, bubbles_key, kind = data.get("tabs"), "tabId", "bubbles", "chat"
        else:
            entries, id_key, bubbles_key = data.get("allComposers"), "composerId", "conversation"
            kind = "composer"
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict) or not isinstance(entry.get(bubbles_key), list):
                continue  # C4+ workspace heads: the conversation lives in the global DB
            source_id = str(entry.get(id_key) or f"{key}#{index}")
            conv = Conversation(
                source_id,
                kind,
                generation,
                {k: v for k, v in entry.items() if k != bubbles_key},
                [b for b in entry[bubbles_key] if isinstance(b, dict)],
                f"{key}[{index}]",
            )
            try:
                conv.digest = xxhash.xxh3_64_hexdigest(
                    orjson.dumps(entry, option=orjson.OPT_SORT_KEYS)
                )
            except SHAPE_ERRORS as exc:  # nested past what any writer can store
                conv.data, conv.bubbles = {}, []
                conv.problems.append((conv.location, shape_error(exc)))
            found.append(conv)
    return found


def heads(conn: sqlite3.Connection, key: str) -> dict[str, dict[str, Any]]:
    """composerId → header (`type: head` entries of C4 workspace / C5 global header lists)."""
    data, _problem = decode_json(item_value(conn, key))  # attribution only: none is no reject
    return {
        str(e["composerId"]): e
        for e in items(mapping(data).get("allComposers"))
        if isinstance(e, dict) and e.get("composerId") and e.get("type") == "head"
    }
