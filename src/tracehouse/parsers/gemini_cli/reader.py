"""A Gemini CLI chat file → one session (README.md here).

Both forms are read whole whenever the file changes: a `.json` chat is rewritten whole, and in
a `.jsonl` chat a later line may replace an earlier message (a reply re-written with its tool
calls), patch the metadata or cut the conversation back (`$rewindTo`), so an appended tail does
not stand on its own. The cursor is the file's stat and content hash: a file rewritten with the
same content writes nothing. A document that does not parse, or a last line without its
newline, is waited for while the file is fresh (the CLI may be writing it) and refused once it
has been quiet for `quiet_seconds`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from tracehouse.model.contract import Clear, Reject
from tracehouse.parsers.base import (
    SHAPE_ERRORS,
    ParseOptions,
    Unit,
    UnitResult,
    session_item,
)
from tracehouse.parsers.gemini_cli.builder import ConversationBuilder
from tracehouse.parsers.gemini_cli.discover import MAIN_FILE, PROVIDER
from tracehouse.parsers.gemini_cli.records import load_document, load_lines
from tracehouse.parsers.jsonl_unit import read_whole, refused, whole_cursor, wm
from tracehouse.parsers.kit.prompt_log import parse_prompt_log
from tracehouse.state.watermark import Action

LOCATIONS = ("document", "messages", "message ")


def parse(unit: Unit, cursor_json: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    if unit.info.get("logs"):
        heads = _recorded(unit.root)
        return parse_prompt_log(PROVIDER, unit, cursor_json, options, lambda s: s[:8] in heads)
    found = read_whole(PROVIDER, unit, cursor_json, options)
    if isinstance(found, UnitResult):
        return found
    st, data = found
    cursor = whole_cursor(st, data)
    jsonl = unit.key.endswith(".jsonl")
    conv = load_lines(data) if jsonl else load_document(data)
    quiet = options.now - st.st_mtime_ns / 1e9 >= options.quiet_seconds
    if conv.incomplete and not quiet:  # come back when the CLI has finished writing it
        return UnitResult(unit, Action.WAIT, bytes_read=len(data), mtime_ns=st.st_mtime_ns)
    if conv.incomplete and jsonl:  # quiet for long enough: the CLI will not finish it
        last = data.count(b"\n") + 1
        conv.problems.append((f"line {last}", "the file ends in the middle of a record"))
    result = UnitResult(
        unit, Action.FULL, bytes_read=len(data), cursor=cursor.to_json(), mtime_ns=st.st_mtime_ns
    )
    result.clear = Clear(PROVIDER, unit.key, from_line=1, keys=LOCATIONS)
    result.accounting.update(conv.accounting)
    sid = conv.meta.get("sessionId")
    if conv.messages and not (isinstance(sid, str) and sid):
        conv.problems.append(("document" if not jsonl else "line 1", "no sessionId"))
        conv.messages = []
    where: dict[str, Any] = {
        "source_path": unit.key,
        "format": "jsonl" if jsonl else "json",
        **unit.info,
    }
    if unit.info.get("parent"):
        where["parent_source_session_id"] = parent_source_id(
            unit.key, str(unit.info["parent"]), conv.meta.get("startTime")
        )
    builder = ConversationBuilder(conv, source_id(unit, conv.meta), where, options.max_field)
    watermark = wm(PROVIDER, unit, cursor)
    try:
        builder.build()
        if builder.has_content():
            result.item = session_item(
                PROVIDER,
                builder.sid,
                builder.session_row(),
                [cursor.tail_hash],
                options.now,
                (watermark,),
            )
            result.rows = {b.table.name: b.tuples() for b in builder.buffers() if len(b)}
        else:
            result.watermark = watermark  # a chat opened and left: only the cursor moves
    except SHAPE_ERRORS as exc:
        return refused(PROVIDER, unit, exc)
    for location, reason in conv.problems:
        result.rejects.append(Reject(PROVIDER, unit.key, location, reason))
        result.accounting["rejected"] += 1
    if result.item is not None:
        result.accounting["session"] += 1
    return result


def source_id(unit: Unit, meta: Mapping[str, Any]) -> str:
    """A main chat's sessionId with its file's start stamp: the CLI records a resumed session
    in a new file under the same sessionId, and a project directory moved by a migration
    leaves the same file under two names, which must stay one session. A subagent's id is its
    own."""
    sid = str(meta.get("sessionId") or os.path.basename(unit.key).rsplit(".", 1)[0])
    if unit.info.get("child"):
        return sid
    name = MAIN_FILE.match(os.path.basename(unit.key))
    return f"{sid}@{name.group(1) if name else _stamp(meta.get('startTime')) or 'unknown'}"


def parent_source_id(path: str, parent: str, child_start: Any) -> str:
    """The parent's source id: its sessionId and the stamp of the file it was recording when
    the subagent started (the newest such file not after it; the newest of all if none)."""
    chats = os.path.dirname(os.path.dirname(path))
    stamps = []
    for name in os.listdir(chats) if os.path.isdir(chats) else ():
        found = MAIN_FILE.match(name)
        if found and parent.startswith(found.group(2)[:8]) and found.group(2) != "":
            stamps.append(found.group(1))
    start = _stamp(child_start) or "9999"
    before = sorted(s for s in stamps if s <= start) or sorted(stamps)
    return f"{parent}@{before[-1]}" if before else f"{parent}@unknown"


def _stamp(iso: Any) -> str | None:
    """`2026-04-16T22:50:54.889Z` → `2026-04-16T22-50`, the file names' form."""
    if not isinstance(iso, str) or not re.match(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", iso):
        return None
    return iso[:16].replace(":", "-")


def _recorded(root: str) -> set[str]:
    """The sessionId heads of every main chat file under the root: their prompts are theirs."""
    heads: set[str] = set()
    tmp = os.path.join(root, "tmp")
    for project in os.listdir(tmp) if os.path.isdir(tmp) else ():
        chats = os.path.join(tmp, project, "chats")
        for name in os.listdir(chats) if os.path.isdir(chats) else ():
            found = MAIN_FILE.match(name)
            if found:
                heads.add(found.group(2)[:8])
    return heads
