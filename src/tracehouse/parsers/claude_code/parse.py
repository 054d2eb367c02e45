"""Parse one Claude Code transcript, or the part of it appended since its watermark."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from typing import Any

import orjson

from tracehouse.model.contract import ImportItem, Reject, WatermarkUpdate
from tracehouse.model.fingerprint import combine
from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import SESSIONS
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.claude_code.builder import PROVIDER, SessionBuilder
from tracehouse.parsers.claude_code.identity import identity
from tracehouse.parsers.jsonl import Chunk, last_line_span, lines, loads, read_chunk
from tracehouse.state.watermark import (
    HEAD_BYTES,
    Action,
    FileCursor,
    hash_bytes,
    quick_plan,
    verify_append,
)

EXCERPT = 500


def parse(unit: Unit, cursor_json: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    cursor = FileCursor.from_json(cursor_json) if cursor_json else None
    try:
        st = os.stat(unit.key)
        f = open(unit.key, "rb")  # noqa: SIM115 - closed below, after the planning reads
    except OSError as exc:
        return _unreadable(unit, exc)
    with f:
        action = Action.FULL if options.full or cursor is None else quick_plan(st, cursor_json)
        if action is Action.SKIP:
            return UnitResult(unit, action, cursor=cursor_json)
        head = f.read(HEAD_BYTES)
        if action is Action.APPEND:
            assert cursor is not None
            f.seek(cursor.tail_start)
            tail = f.read(cursor.offset - cursor.tail_start)
            if not verify_append(cursor, head, tail):
                action = Action.FULL
        start = cursor.offset if action is Action.APPEND and cursor else 0
        quiet = options.now - st.st_mtime_ns / 1e9 >= options.quiet_seconds
        chunk = read_chunk(f, start, st.st_size, options.budget_bytes, final_line_complete=quiet)
    base = cursor if action is Action.APPEND else None
    if not chunk.data:
        # Nothing complete to read: a partial last line waits; a touched file gets a new stat.
        new = _cursor(st, chunk, base, head, base.state if base else {}, base.lines if base else 0)
        wait = Action.WAIT if chunk.end < st.st_size else action
        return UnitResult(unit, wait, watermark=_wm(unit, new), cursor=new.to_json())
    return _parse_chunk(unit, st, chunk, base, head, options, action)


def _parse_chunk(
    unit: Unit,
    st: os.stat_result,
    chunk: Chunk,
    base: FileCursor | None,
    head: bytes,
    options: ParseOptions,
    action: Action,
) -> UnitResult:
    ident = identity(unit)
    builder = SessionBuilder(ident, dict(base.state) if base else None, options.max_field)
    first_line = base.lines if base else 0
    rejects: list[Reject] = []
    accounting: Counter[str] = Counter()
    for offset, index, raw in lines(chunk):
        record = loads(raw)
        if record is None:
            reason = f"invalid JSON: {_json_error(raw)}"
            rejects.append(_reject(unit, first_line + index + 1, offset, reason, raw))
            accounting["rejected"] += 1
            continue
        if not isinstance(record, dict):
            reason = f"a JSON {type(record).__name__}, not an object"
            rejects.append(_reject(unit, first_line + index + 1, offset, reason, raw))
            accounting["rejected"] += 1
            continue
        try:
            accounting[builder.feed(record, offset)] += 1
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            reason = f"unexpected shape ({type(exc).__name__}: {exc})"
            rejects.append(_reject(unit, first_line + index + 1, offset, reason, raw))
            accounting["rejected"] += 1
    state = builder.finish()
    line_count = chunk.data.count(b"\n") + (0 if chunk.data.endswith(b"\n") else 1)
    cursor = _cursor(st, chunk, base, head, state, first_line + line_count)
    result = UnitResult(
        unit,
        action,
        rejects=rejects,
        bytes_read=len(chunk.data),
        done=chunk.eof,
        accounting=accounting,
        cursor=cursor.to_json(),
        mtime_ns=st.st_mtime_ns,
    )
    watermark = _wm(unit, cursor)
    if builder.agg.messages == 0:
        result.watermark = watermark  # nothing conversational (yet): only the cursor moves
        return result
    session = builder.session_row()
    fingerprint = combine([row_fingerprint(SESSIONS, session), str(chunk.end), cursor.tail_hash])
    result.item = ImportItem(
        PROVIDER,
        ident.source_session_id,
        fingerprint,
        int(options.now * 1000),
        {**session, "fingerprint": fingerprint},
        (watermark,),
    )
    result.rows = {
        buffer.table.name: buffer.tuples()
        for buffer in (builder.messages, builder.turns.rows, builder.tool_calls, builder.sources)
        if len(buffer)
    }
    return result


def _cursor(
    st: os.stat_result,
    chunk: Chunk,
    base: FileCursor | None,
    head: bytes,
    state: Mapping[str, Any],
    line_count: int,
) -> FileCursor:
    if chunk.data:
        tail_start, tail = last_line_span(chunk.data, chunk.start)
        tail_hash = hash_bytes(tail)
    elif base is not None:
        tail_start, tail_hash = base.tail_start, base.tail_hash
    else:
        tail_start, tail_hash = 0, hash_bytes(b"")
    return FileCursor(
        dev=st.st_dev,
        ino=st.st_ino,
        # Short of the end (a budget cut, or a partial last line waiting), the recorded size is
        # the offset, so the next pass reads on instead of skipping.
        size=st.st_size if chunk.eof else chunk.end,
        mtime_ns=st.st_mtime_ns,
        offset=chunk.end,
        head_hash=hash_bytes(head[: min(HEAD_BYTES, chunk.end)]),
        tail_start=tail_start,
        tail_hash=tail_hash,
        state=state,
        lines=line_count,
    )


def _json_error(raw: bytes) -> str:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return str(exc)
    return "unreadable"


def _wm(unit: Unit, cursor: FileCursor) -> WatermarkUpdate:
    position = cursor.to_json()
    state = position.pop("state")
    return WatermarkUpdate(PROVIDER, unit.key, position, state)


def _reject(unit: Unit, line: int, offset: int, reason: str, raw: bytes) -> Reject:
    excerpt = raw[:EXCERPT].decode("utf-8", "replace")
    return Reject(PROVIDER, unit.key, f"line {line} (byte {offset})", reason, excerpt)


def _unreadable(unit: Unit, exc: OSError) -> UnitResult:
    reason = f"cannot read: {exc.strerror or exc}"
    return UnitResult(unit, Action.SKIP, rejects=[Reject(PROVIDER, unit.key, "file", reason)])
