"""Parse one append-only JSONL unit, or the part appended since its watermark.

Every JSONL source (Claude Code transcripts, Codex rollouts, Codex prompt history) shares this
loop: plan from a stat and the cursor, verify an append by its head and tail hashes, read complete
lines within the budget, feed each record to the source's resumable builder, and return its rows
with the new cursor. A source supplies only the builder.

A builder's resume state lives in every user's watermarks. A source whose builder comes to keep
another state names its shape (`shape`, 0 until then): a cursor whose state is of another shape
is not resumed but its file read whole again, once, when it next grows, replacing the rows it
gave before with the same rows, as any full read does.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from tracehouse.model.contract import Clear, Reject, WatermarkUpdate
from tracehouse.model.fingerprint import canonical_json
from tracehouse.model.rows import TableBuffer
from tracehouse.parsers.base import (
    SHAPE_ERRORS,
    ParseOptions,
    Unit,
    UnitResult,
    session_item,
    shape_error,
)
from tracehouse.parsers.kit.jsonl import (
    Chunk,
    LineError,
    blank,
    decode_line,
    last_line_span,
    lines,
    loads,
    read_chunk,
)
from tracehouse.state.watermark import (
    HEAD_BYTES,
    Action,
    FileCursor,
    beside_changed,
    hash_bytes,
    quick_plan,
    stamps,
    verify_append,
)

EXCERPT = 500
SHAPE = "state_shape"  # the resume state's key for its shape, kept only where it is not 0


class Builder(Protocol):
    """A source's resumable record → rows state machine (one session per unit)."""

    @property
    def source_session_id(self) -> str: ...

    def feed(self, record: dict[str, Any], offset: int) -> str:
        """Consume one record; returns how it was accounted for (row, folded, ignored…)."""
        ...

    def finish(self) -> dict[str, Any]:
        """Emit the rows still open; returns the resume state for the next append."""
        ...

    def has_content(self) -> bool: ...

    def session_row(self) -> dict[str, Any]: ...

    def buffers(self) -> Iterable[TableBuffer]: ...


MakeBuilder = Callable[[dict[str, Any] | None], Builder]


def parse_jsonl(
    provider: str,
    unit: Unit,
    cursor_json: Mapping[str, Any] | None,
    options: ParseOptions,
    make_builder: MakeBuilder,
    shape: int = 0,
) -> UnitResult:
    cursor = FileCursor.from_json(cursor_json) if cursor_json else None
    # Stamped before the builder reads them: a file changed meanwhile is read again next time.
    beside = list(unit.info.get("beside") or ())
    stamped = stamps(beside) if beside else None
    try:
        st = os.stat(unit.key)
        f = open(unit.key, "rb")  # noqa: SIM115 - closed below, after the planning reads
    except OSError as exc:
        return unreadable(provider, unit, exc)
    with f:
        action = Action.FULL if options.full or cursor is None else quick_plan(st, cursor_json)
        if beside_changed(beside, cursor_json):
            action = Action.FULL
        if action is Action.SKIP:
            return UnitResult(unit, action, cursor=cursor_json)
        head = f.read(HEAD_BYTES)
        if action is Action.APPEND:
            assert cursor is not None
            f.seek(cursor.tail_start)
            tail = f.read(cursor.offset - cursor.tail_start)
            if not verify_append(cursor, head, tail) or cursor.state.get(SHAPE, 0) != shape:
                action = Action.FULL
        start = cursor.offset if action is Action.APPEND and cursor else 0
        quiet = options.now - st.st_mtime_ns / 1e9 >= options.quiet_seconds
        chunk = read_chunk(
            f, start, st.st_size, options.budget_bytes,
            final_line_complete=quiet, max_line=options.max_line,
        )  # fmt: skip
    base = cursor if action is Action.APPEND else None
    kept = _stamped(base.state if base else {}, shape)
    if chunk.skipped:
        return _skipped(provider, unit, action, st, chunk, base, head, kept, stamped, options)
    if not chunk.data:
        # Nothing complete to read: a partial last line waits; a touched file gets a new stat.
        new = _cursor(st, chunk, base, head, kept, base.lines if base else 0, stamped)
        wait = Action.WAIT if chunk.end < st.st_size else action
        return UnitResult(unit, wait, watermark=wm(provider, unit, new), cursor=new.to_json())
    first_line = base.lines if base else 0
    result = UnitResult(
        unit, action, bytes_read=len(chunk.data), done=chunk.eof, mtime_ns=st.st_mtime_ns
    )
    skip: dict[int, str] = {}
    while True:
        resumed = {k: v for k, v in base.state.items() if k != SHAPE} if base else None
        builder = make_builder(resumed)
        result.rejects, result.accounting = [], Counter()
        line_count = _feed_all(provider, unit, chunk, first_line, builder, skip, result, options)
        try:
            state = _stamped(builder.finish(), shape)
            new = _cursor(st, chunk, base, head, state, first_line + line_count, stamped)
            attach(
                provider,
                result,
                builder,
                wm(provider, unit, new),
                [str(chunk.end), new.tail_hash],
                options,
            )
            break
        except SHAPE_ERRORS as exc:
            # A value the builder took but no store can hold (nested past the JSON writer's
            # depth, or an integer past int64): find the lines that carry one and build again
            # without them. Costs nothing on good input; a unit without such a line is refused.
            found = _unstorable_lines(chunk, first_line, skip)
            if not found:
                return refused(provider, unit, exc)
            skip.update(found)
    result.cursor = new.to_json()
    result.clear = Clear(provider, unit.key, from_line=first_line + 1)
    return result


def _skipped(
    provider: str,
    unit: Unit,
    action: Action,
    st: os.stat_result,
    chunk: Chunk,
    base: FileCursor | None,
    head: bytes,
    state: Mapping[str, Any],
    beside: Mapping[str, list[int] | None] | None,
    options: ParseOptions,
) -> UnitResult:
    """A line over the size limit, skipped unread: its reject, and the cursor moved past it
    with the builder's state as it was, so the lines after it are read as an append."""
    line = (base.lines if base else 0) + 1
    new = _cursor(st, chunk, base, head, state, line, beside)
    result = UnitResult(
        unit, action, bytes_read=chunk.skipped, done=chunk.eof, mtime_ns=st.st_mtime_ns
    )
    where = f"line {line} (byte {chunk.start})"
    size = chunk.skipped - chunk.tail.endswith(b"\n")  # the line, without its newline
    result.rejects.append(Reject(provider, unit.key, where, too_long(size, options)))
    result.accounting["rejected"] += 1
    result.watermark = wm(provider, unit, new)
    result.cursor = new.to_json()
    result.clear = Clear(provider, unit.key, from_line=line)
    return result


def _stamped(state: Mapping[str, Any], shape: int) -> Mapping[str, Any]:
    """A resume state with its shape, which a state of shape 0 does not name (so that the
    cursors every source wrote before shapes existed stay as they were)."""
    return {**state, SHAPE: shape} if shape else state


def too_long(size: int, options: ParseOptions) -> str:
    return f"{size:,} bytes, over the {options.max_line:,}-byte limit (max_line_bytes): skipped"


MAX_DEPTH = 200  # orjson writes at most 254 levels; the session row wraps a record in a few more
MAX_INT = 2**63 - 1


def _feed_all(
    provider: str,
    unit: Unit,
    chunk: Chunk,
    first_line: int,
    builder: Builder,
    skip: Mapping[int, str],
    result: UnitResult,
    options: ParseOptions,
) -> int:
    """Feed every line of the chunk to the builder; returns how many lines it holds."""
    index = -1
    for offset, index, raw in lines(chunk):
        if blank(raw):
            continue
        line = first_line + index + 1
        reason = skip.get(line)
        if reason is None and len(raw) > options.max_line:  # a budget above the line limit
            reason = too_long(len(raw), options)
        if reason is None:
            try:
                record = decode_line(raw)
            except LineError as exc:
                reason = str(exc)
            else:
                if not isinstance(record, dict):
                    reason = f"a JSON {type(record).__name__}, not an object"
        if reason is None:
            try:
                result.accounting[builder.feed(record, offset)] += 1
                continue
            except SHAPE_ERRORS as exc:
                reason = shape_error(exc)
        result.rejects.append(reject(provider, unit, line, offset, reason, raw))
        result.accounting["rejected"] += 1
    return index + 1


def _unstorable_lines(chunk: Chunk, first_line: int, skip: Mapping[int, str]) -> dict[int, str]:
    found = {}
    for _offset, index, raw in lines(chunk):
        line = first_line + index + 1
        if line in skip or blank(raw):
            continue
        why = unstorable(loads(raw))
        if why:
            found[line] = why
    return found


def unstorable(value: Any) -> str | None:
    """Why a decoded value cannot be stored (too deep, an integer past int64), or None."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
        elif isinstance(node, int) and not -MAX_INT - 1 <= node <= MAX_INT:
            return f"integer {node} does not fit in 64 bits"
    return None


def refused(provider: str, unit: Unit, exc: Exception) -> UnitResult:
    """A unit whose rows cannot be built: one reject for the file, no cursor moved, so the next
    run reads it again (a fixed tracehouse, or a changed file, may read it then)."""
    reason = f"cannot build its rows ({shape_error(exc)})"
    return UnitResult(unit, Action.SKIP, rejects=[Reject(provider, unit.key, "file", reason)])


def attach(
    provider: str,
    result: UnitResult,
    builder: Builder,
    watermark: WatermarkUpdate,
    salt: list[str],
    options: ParseOptions,
) -> None:
    """Put the builder's session and rows on the result, or only the watermark if it has none.

    The item fingerprint covers the session row and where the unit's content ends (`salt`), so a
    re-parse of unchanged bytes is skipped by the store as a whole.
    """
    if not builder.has_content():
        result.watermark = watermark  # nothing conversational (yet): only the cursor moves
        return
    result.item = session_item(
        provider, builder.source_session_id, builder.session_row(), salt, options.now, (watermark,)
    )
    result.rows = {
        buffer.table.name: buffer.tuples() for buffer in builder.buffers() if len(buffer)
    }


def _cursor(
    st: os.stat_result,
    chunk: Chunk,
    base: FileCursor | None,
    head: bytes,
    state: Mapping[str, Any],
    line_count: int,
    beside: Mapping[str, list[int] | None] | None,
) -> FileCursor:
    if chunk.skipped:
        tail_start, tail_hash = chunk.end - len(chunk.tail), hash_bytes(chunk.tail)
    elif chunk.data:
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
        beside=beside,
    )


def read_whole(
    provider: str, unit: Unit, cursor_json: Mapping[str, Any] | None, options: ParseOptions
) -> tuple[os.stat_result, bytes] | UnitResult:
    """A unit parsed whole whenever it changes: its stat and bytes, or the result to return
    instead (unchanged, unreadable, or larger than a line may be: rejected unread, with a
    cursor that skips it until it changes)."""
    try:
        st = os.stat(unit.key)
        if not options.full and cursor_json and quick_plan(st, cursor_json) is Action.SKIP:
            return UnitResult(unit, Action.SKIP, cursor=cursor_json)
        if st.st_size > options.max_line:
            return _too_large(provider, unit, st, options)
        with open(unit.key, "rb") as f:
            return st, f.read()
    except OSError as exc:
        return unreadable(provider, unit, exc)


def _too_large(provider: str, unit: Unit, st: os.stat_result, options: ParseOptions) -> UnitResult:
    cursor = FileCursor(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_size, "", 0, "")
    result = UnitResult(unit, Action.FULL, cursor=cursor.to_json(), mtime_ns=st.st_mtime_ns)
    result.watermark = wm(provider, unit, cursor)
    reason = f"a document of {too_long(st.st_size, options)}"
    result.rejects.append(Reject(provider, unit.key, "document", reason))
    result.accounting["rejected"] += 1
    result.clear = Clear(provider, unit.key, from_line=1, keys=("document",))
    return result


def whole_cursor(st: os.stat_result, data: bytes) -> FileCursor:
    return FileCursor(
        dev=st.st_dev,
        ino=st.st_ino,
        size=len(data),
        mtime_ns=st.st_mtime_ns,
        offset=len(data),
        head_hash=hash_bytes(data[:HEAD_BYTES]),
        tail_start=0,
        tail_hash=hash_bytes(data),
    )


def wm(provider: str, unit: Unit, cursor: FileCursor) -> WatermarkUpdate:
    """The unit's new cursor, its state encoded here: a value nested past the JSON writer's
    depth that the builder holds on to (an open call's input) is found while parsing (it raises
    one of SHAPE_ERRORS), not at commit."""
    position = cursor.to_json()
    state = canonical_json(position.pop("state"))
    return WatermarkUpdate(provider, unit.key, position, state)


def reject(provider: str, unit: Unit, line: int, offset: int, reason: str, raw: bytes) -> Reject:
    excerpt = raw[:EXCERPT].decode("utf-8", "replace")
    return Reject(provider, unit.key, f"line {line} (byte {offset})", reason, excerpt)


def unreadable(provider: str, unit: Unit, exc: OSError) -> UnitResult:
    reason = f"cannot read: {exc.strerror or exc}"
    return UnitResult(unit, Action.SKIP, rejects=[Reject(provider, unit.key, "file", reason)])
