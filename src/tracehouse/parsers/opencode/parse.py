"""An OpenCode unit → sessions (README.md here).

A Gen 0/1 session file is read with its message and part files whenever a stat of any of them
changed; the session's fingerprint covers their bytes, so a rewrite that changes nothing writes
nothing. A Gen 2 database is read from a private snapshot (`sqlite_snapshot`) when a stat of it or
its `-wal` changed, and then only the sessions whose stamp changed: the per-session watermark is
each session's `time_updated` with the count and newest update time of its messages and parts.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from typing import Any

import orjson
import xxhash

from tracehouse.model.contract import Clear, ImportItem, Reject, WatermarkUpdate
from tracehouse.parsers.base import (
    SHAPE_ERRORS,
    ParseOptions,
    Unit,
    UnitResult,
    session_item,
    shape_error,
)
from tracehouse.parsers.opencode import records
from tracehouse.parsers.opencode.builder import SessionBuilder
from tracehouse.parsers.opencode.discover import PROVIDER
from tracehouse.parsers.sqlite_snapshot import SnapshotError, require_tables, signature, snapshot
from tracehouse.state.watermark import Action


def plan_unit(unit: Unit, cursor: Mapping[str, Any] | None, full: bool) -> int | None:
    """Bytes a parse may read, or None when no stat of the unit's files changed."""
    if unit.info.get("kind") == "db":
        files = signature(unit.key)
        stamp: Any = files
    else:
        files = json_signature(unit)
        stamp = _digest(files)
    if files.get("db", files.get(unit.key)) is None:
        return None  # vanished since discovery: the next run flags it missing
    if full or not cursor or cursor.get("missing") or cursor.get("files") != stamp:
        return sum(f[1] for f in files.values() if f)
    return None


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    if unit.info.get("kind") == "db":
        return _parse_database(unit, cursor, options)
    files = json_signature(unit)
    result = _result(unit, files)
    raw = records.load_json_session(unit.key, int(unit.info.get("generation", 1)))
    result.clear = Clear(PROVIDER, unit.key, keys=("",))
    new_cursor = {"files": _digest(files)}
    result.cursor = new_cursor
    watermark = WatermarkUpdate(PROVIDER, unit.key, new_cursor, {"digest": raw.digest})
    result.item = _item(raw, unit, options, result, (watermark,))
    if result.item is None:
        result.watermark = watermark  # a session opened and left: only the cursor moves
    return result


def _parse_database(
    unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions
) -> UnitResult:
    files = signature(unit.key)
    result = _result(unit, files)
    known: dict[str, str] = dict(((cursor or {}).get("state") or {}).get("sessions") or {})
    if options.full:
        known = {}
    try:
        with snapshot(unit.key, options.scratch) as conn:
            require_tables(conn, ("session",), "an OpenCode database")
            rows = records.session_rows(conn)
            stamps = records.session_stamps(conn)
            changed = []
            for row in rows:
                sid = str(row.get("id"))
                stamp = _stamp(row, stamps.get(sid, ""))
                if known.get(sid) != stamp:
                    changed.append(records.load_db_session(conn, row, unit.key))
                    known[sid] = stamp
    except (SnapshotError, sqlite3.DatabaseError, OSError) as exc:
        result.rejects.append(Reject(PROVIDER, unit.key, "database", f"cannot read: {exc}"))
        result.accounting["rejected"] += 1
        return result  # no watermark: read again next run
    keys = tuple(f"session {raw.info['id']}" for raw in changed)
    result.clear = Clear(PROVIDER, unit.key, keys=keys or ("session ",))
    for raw in changed:
        item = _item(raw, unit, options, result)
        if item is not None:
            result.extra.append(item)
    new_cursor = {"files": files}
    result.cursor = new_cursor
    result.watermark = WatermarkUpdate(PROVIDER, unit.key, new_cursor, {"sessions": known})
    return result


def _item(
    raw: records.RawSession,
    unit: Unit,
    options: ParseOptions,
    result: UnitResult,
    watermarks: tuple[WatermarkUpdate, ...] = (),
) -> ImportItem | None:
    where = {"source_path": unit.key, **unit.info}
    builder = SessionBuilder(raw, where, options.max_field)
    item = None
    try:
        builder.build()
        if builder.has_content():
            item = session_item(
                PROVIDER, builder.sid, builder.session_row(), [raw.digest], options.now, watermarks
            )
            for buffer in builder.buffers():
                if len(buffer):
                    result.rows.setdefault(buffer.table.name, []).extend(buffer.tuples())
            result.accounting["session"] += 1
        else:
            result.accounting["empty session"] += 1  # opened and left: nothing was said
    except SHAPE_ERRORS as exc:
        raw.problems.append((raw.location, shape_error(exc)))
    result.accounting.update(builder.accounting)
    for location, reason in raw.problems:
        result.rejects.append(Reject(PROVIDER, unit.key, location, reason))
        result.accounting["rejected"] += 1
    return item


def _result(unit: Unit, files: Mapping[str, list[int] | None]) -> UnitResult:
    size = sum(f[1] for f in files.values() if f)
    mtime = max((f[2] for f in files.values() if f), default=0)
    return UnitResult(unit, Action.FULL, bytes_read=size, mtime_ns=mtime)


def _digest(files: Mapping[str, Any]) -> str:
    return xxhash.xxh3_64_hexdigest(orjson.dumps(files, option=orjson.OPT_SORT_KEYS))


def _stamp(row: Mapping[str, Any], rows_stamp: str) -> str:
    own = orjson.dumps(row, default=str)
    return xxhash.xxh3_64_hexdigest(own + rows_stamp.encode())


def json_signature(unit: Unit) -> dict[str, list[int] | None]:
    """A stat of the session file and of every message and part file of the session."""
    out: dict[str, list[int] | None] = {}
    sid = os.path.basename(unit.key).removesuffix(".json")
    if unit.info.get("generation") == 0:
        base = os.path.dirname(os.path.dirname(unit.key))
        message_dir = os.path.join(base, "message", sid)
        part_root = os.path.join(base, "part", sid)
    else:
        storage = os.path.dirname(os.path.dirname(os.path.dirname(unit.key)))
        message_dir = os.path.join(storage, "message", sid)
        part_root = os.path.join(storage, "part")
    out[unit.key] = _stat(unit.key)
    for name in _names(message_dir):
        out[name] = _stat(os.path.join(message_dir, name))
        part_dir = os.path.join(part_root, name.removesuffix(".json"))
        for part in _names(part_dir):
            out[f"{name}/{part}"] = _stat(os.path.join(part_dir, part))
    return out


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _names(directory: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return []
