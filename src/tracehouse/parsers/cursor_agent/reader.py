"""A Cursor agent unit → one session (README.md here).

Transcripts are read whole whenever a stat of any of their files changed (twins are written side
by side and a JSON array is rewritten whole); the fingerprint covers their bytes, so a rewrite
that changes nothing writes nothing. A JSONL whose last line does not parse is waited for while
the file is fresh and refused once it has been quiet for `quiet_seconds`. A `store.db` is read
from a private snapshot, as Cursor's own databases are.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from typing import Any

import xxhash

from tracehouse.model.contract import Clear, Reject, WatermarkUpdate
from tracehouse.model.fields import iso
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
from tracehouse.parsers.cursor_agent import store as store_db
from tracehouse.parsers.cursor_agent import transcripts as tr
from tracehouse.parsers.cursor_agent.builder import TranscriptBuilder
from tracehouse.parsers.cursor_agent.discover import (
    PROVIDER,
    members,
    subagents,
    unit_files,
)
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.sqlite_snapshot import SnapshotError, require_tables, snapshot
from tracehouse.state.watermark import Action


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    files = unit_files(unit)
    result = files_result(unit, files)
    # No file time stands for the conversation's: a copy or a checkout gives every file a new one
    where: dict[str, Any] = {"source_path": unit.key, **unit.info}
    if unit.info.get("kind") == "store":
        try:
            with snapshot(unit.key, options.scratch) as conn:
                require_tables(conn, ("blobs",), "a Cursor agent store")
                stored = store_db.load(conn)
        except (SnapshotError, sqlite3.DatabaseError, OSError) as exc:
            result.rejects.append(Reject(PROVIDER, unit.key, "database", f"cannot read: {exc}"))
            result.accounting["rejected"] += 1
            return result  # no watermark: read again next run
        transcript, digest = store_db.transcript(stored), stored.digest
        source_id = str(stored.meta.get("agentId") or os.path.basename(os.path.dirname(unit.key)))
        where.update(
            store_meta=stored.meta,
            created_at=iso(stored.meta.get("createdAt")),
            unordered=not stored.ordered,
            entrypoint="cli",
        )
    else:
        found = _read_transcripts(unit, options)
        if found is None:  # a JSONL still being written
            return UnitResult(unit, Action.WAIT, bytes_read=result.bytes_read,
                              mtime_ns=result.mtime_ns)  # fmt: skip
        transcript, digest = found
        source_id = os.path.basename(unit.key).removesuffix(".jsonl")
        if unit.info.get("kind") == "transcript":
            children = subagents(unit.key)
            where["children"] = [os.path.basename(c).removesuffix(".jsonl") for c in children]
    result.clear = Clear(PROVIDER, unit.key, keys=("",))
    new_cursor = {"files": files_digest(files)}
    result.cursor = new_cursor
    watermark = WatermarkUpdate(PROVIDER, unit.key, new_cursor, {"digest": digest})
    builder = TranscriptBuilder(transcript, source_id, where, options.max_field)
    try:
        builder.build()
        if builder.has_content():
            result.item = session_item(
                PROVIDER, source_id, builder.session_row(), [digest], options.now, (watermark,)
            )
            result.rows = {b.table.name: b.tuples() for b in builder.buffers() if len(b)}
            result.accounting["session"] += 1
        else:
            result.watermark = watermark
    except SHAPE_ERRORS as exc:
        transcript.problems.append(("file", f"cannot build its rows ({shape_error(exc)})"))
        result.item, result.rows, result.watermark = None, {}, None
    result.accounting.update(transcript.accounting)
    for location, reason in transcript.problems:
        result.rejects.append(Reject(PROVIDER, unit.key, location, reason))
        result.accounting["rejected"] += 1
    return result


def _read_transcripts(unit: Unit, options: ParseOptions) -> tuple[tr.Transcript, str] | None:
    paths = [unit.key] if unit.info.get("kind") == "subagent" else members(unit.key)
    digest = xxhash.xxh3_128()
    read: list[tr.Transcript] = []
    for path in paths:
        try:
            data = read_file(path, options.max_line)  # read whole: never past the line limit
            fresh = options.now - os.stat(path).st_mtime
        except OSError as exc:
            failed = tr.Transcript("txt")
            failed.problems.append((os.path.basename(path), f"cannot read: {exc.strerror or exc}"))
            read.append(failed)
            continue
        digest.update(os.path.basename(path).encode() + b"\0" + data)
        if path.endswith(".jsonl"):
            nested = os.path.dirname(path) == unit.key or unit.info.get("kind") == "subagent"
            transcript = tr.read_jsonl(data, "nested" if nested else "flat")
            if transcript.problems and not data.endswith(b"\n") and fresh < options.quiet_seconds:
                return None  # the agent is still writing the last line
        elif path.endswith(".json"):
            transcript = tr.read_json(data)
        else:
            transcript = tr.read_txt(data)
        name = os.path.basename(path)
        transcript.problems = [(f"{name} {where}", why) for where, why in transcript.problems]
        read.append(transcript)
    merged = tr.merge(read) if len(read) > 1 else (read[0] if read else tr.Transcript("txt"))
    return merged, digest.hexdigest()
