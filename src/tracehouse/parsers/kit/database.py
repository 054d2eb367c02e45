"""A source whose unit is an agent's SQLite database of many sessions (OpenCode's, Crush's):
planned from a stat of the database and its `-wal`, read from a private snapshot
(`sqlite_snapshot`), and only the sessions whose stamp changed are built again. The stamps are
the watermark's state, so a session changed by a later write is read on the next run and an
unchanged one is never rebuilt.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tracehouse.model.contract import Clear, ImportItem, Reject, WatermarkUpdate
from tracehouse.parsers.base import (
    ParseOptions,
    Unit,
    UnitResult,
    files_result,
    plan_files,
    session_item,
)
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.sqlite_snapshot import (
    SnapshotError,
    require_tables,
    signature,
    snapshot,
)
from tracehouse.parsers.kit.untrusted import token

# Each session's id and stamp (what changes whenever any of its rows does).
Stamps = Callable[[sqlite3.Connection], Iterable[tuple[str, str]]]
# One changed session's items (none for an empty one), adding its rows and rejects to the result.
Build = Callable[[sqlite3.Connection, str, UnitResult], list[ImportItem]]


def plan_database(unit: Unit, cursor: Mapping[str, Any] | None, full: bool) -> int | None:
    """Bytes a parse may read, or None when no stat of the database or its side files moved."""
    files = signature(unit.key)
    if files.get("db") is None:
        return None  # vanished since discovery: the next run flags it missing
    return plan_files(files, cursor, full, files)


def parse_database(
    provider: str,
    unit: Unit,
    cursor: Mapping[str, Any] | None,
    options: ParseOptions,
    tables: tuple[str, ...],
    stamps: Stamps,
    build: Build,
) -> UnitResult:
    files = signature(unit.key)
    result = files_result(unit, files)
    known: dict[str, str] = {} if options.full else dict(
        ((cursor or {}).get("state") or {}).get("sessions") or {}
    )  # fmt: skip
    built: list[str] = []
    try:
        with snapshot(unit.key, options.scratch) as conn:
            require_tables(conn, tables, f"a {provider} database")
            for sid, stamp in stamps(conn):
                if known.get(sid) != stamp:
                    result.extra.extend(build(conn, sid, result))
                    known[sid] = stamp
                    built.append(sid)
    except (SnapshotError, sqlite3.DatabaseError, OSError) as exc:
        result.rejects.append(Reject(provider, unit.key, "database", f"cannot read: {exc}"))
        result.accounting["rejected"] += 1
        result.extra.clear()
        result.rows.clear()
        return result  # no watermark: read again next run
    result.clear = Clear(provider, unit.key, keys=tuple(f"session {token(s)}" for s in built)
                         or ("session ",))  # fmt: skip
    result.cursor = {"files": files}
    result.watermark = WatermarkUpdate(provider, unit.key, result.cursor, {"sessions": known})
    return result


def built(talk: Conversation, result: UnitResult, fields: Mapping[str, Any], stamp: str,
          now: float) -> list[ImportItem]:  # fmt: skip
    """One session of the database finished: its rows added to the result, and its item (none
    for a session with nothing said in it). `stamp` salts its fingerprint."""
    talk.finish()
    if not talk.has_content():
        result.accounting["empty session"] += 1
        return []
    for buffer in talk.buffers():
        if len(buffer):
            result.rows.setdefault(buffer.table.name, []).extend(buffer.tuples())
    result.accounting["session"] += 1
    row = talk.session_row(**fields)
    return [session_item(talk.provider, talk.sid, row, [stamp], now)]
