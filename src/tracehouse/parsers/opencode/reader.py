"""An OpenCode unit → sessions (README.md here).

A Gen 0/1 session file is read with its message and part files whenever a stat of any of them
changed; the session's fingerprint covers their bytes, so a rewrite that changes nothing writes
nothing. A Gen 2 database is read from a private snapshot (`sqlite_snapshot`) when a stat of it or
its `-wal` changed, and then only the sessions whose stamp changed: the per-session watermark is
each session's `time_updated` with the count and newest update time of its messages and parts.
"""

from __future__ import annotations

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
    files_digest,
    files_result,
    session_item,
    shape_error,
)
from tracehouse.parsers.kit.database import parse_database
from tracehouse.parsers.opencode import records
from tracehouse.parsers.opencode.builder import SessionBuilder
from tracehouse.parsers.opencode.discover import PROVIDER, json_signature


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    if unit.info.get("kind") == "db":
        return _parse_database(unit, cursor, options)
    files = json_signature(unit)
    result = files_result(unit, files)
    raw = records.load_json_session(unit.key, int(unit.info.get("generation", 1)))
    result.clear = Clear(PROVIDER, unit.key, keys=("",))
    new_cursor = {"files": files_digest(files)}
    result.cursor = new_cursor
    watermark = WatermarkUpdate(PROVIDER, unit.key, new_cursor, {"digest": raw.digest})
    result.item = _item(raw, unit, options, result, (watermark,))
    if result.item is None:
        result.watermark = watermark  # a session opened and left: only the cursor moves
    return result


def _parse_database(
    unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions
) -> UnitResult:
    rows: dict[str, dict[str, Any]] = {}

    def stamps(conn: sqlite3.Connection) -> list[tuple[str, str]]:
        per_session = records.session_stamps(conn)
        rows.update((str(row.get("id")), row) for row in records.session_rows(conn))
        return [(sid, _stamp(row, per_session.get(sid, ""))) for sid, row in rows.items()]

    def build(conn: sqlite3.Connection, sid: str, result: UnitResult) -> list[ImportItem]:
        item = _item(records.load_db_session(conn, rows[sid], unit.key), unit, options, result)
        return [item] if item is not None else []

    return parse_database(PROVIDER, unit, cursor, options, ("session",), stamps, build)


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


def _stamp(row: Mapping[str, Any], rows_stamp: str) -> str:
    own = orjson.dumps(row, default=str)
    return xxhash.xxh3_64_hexdigest(own + rows_stamp.encode())
