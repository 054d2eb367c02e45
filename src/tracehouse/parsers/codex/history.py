"""`history.jsonl`: every prompt typed into Codex, `{session_id, ts, text}` per line.

Prompts of threads whose rollout is on disk are attribution evidence for that rollout's user
messages (see context.py). A thread whose rollout is gone keeps its prompts here: they become a
session flagged `metadata.recovered_from = "history"`, which the store never lets replace a
session imported from its rollout. The file is small and rewritten rarely: any change parses
it whole.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from tracehouse.model import ids
from tracehouse.model.contract import Clear, ImportItem
from tracehouse.model.fields import cap
from tracehouse.model.fingerprint import combine
from tracehouse.model.rows import TableBuffer, row_fingerprint
from tracehouse.model.tables import MESSAGES, SESSIONS, TURNS
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.codex.context import rollout_paths
from tracehouse.parsers.codex.records import PROVIDER, thread_id_of
from tracehouse.parsers.jsonl import loads
from tracehouse.parsers.jsonl_unit import read_whole, reject, whole_cursor, wm
from tracehouse.state.watermark import Action

LAST_SECOND = 253402300800  # 10000-01-01: past it, a timestamp is not one


def parse(unit: Unit, cursor_json: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    read = read_whole(PROVIDER, unit, cursor_json, options)
    if isinstance(read, UnitResult):
        return read
    st, data = read
    data = data[: data.rfind(b"\n") + 1]  # a prompt being written waits for its newline
    cursor = whole_cursor(st, data)
    result = UnitResult(
        unit, Action.FULL, bytes_read=len(data), cursor=cursor.to_json(), mtime_ns=st.st_mtime_ns
    )
    result.watermark = wm(PROVIDER, unit, cursor)
    result.clear = Clear(PROVIDER, unit.key, from_line=1)
    prompts: dict[str, list[tuple[float, str]]] = {}
    offset = 0
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        r = loads(line) if line.strip() else {}
        sid = r.get("session_id") or r.get("conversation_id") if isinstance(r, dict) else None
        if not isinstance(r, dict) or (r and not (isinstance(sid, str) and "text" in r)):
            result.rejects.append(reject(PROVIDER, unit, number, offset, "not a prompt", line))
            result.accounting["rejected"] += 1
        elif r and isinstance(sid, str):
            ts = r.get("ts")
            at = float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) else 0.0
            if not 0 <= at < LAST_SECOND:
                reason = f"ts {ts!r} is not a time"
                result.rejects.append(reject(PROVIDER, unit, number, offset, reason, line))
                result.accounting["rejected"] += 1
            else:
                prompts.setdefault(sid, []).append((at, str(r["text"])))
                result.accounting["prompt"] += 1
        offset += len(line)
    on_disk = {thread_id_of(os.path.basename(p)) for p in rollout_paths(str(unit.info["home"]))}
    tables = {t.name: TableBuffer(t) for t in (MESSAGES, TURNS)}
    for sid, found in sorted(prompts.items()):
        if sid.lower() in on_disk:
            continue
        result.extra.append(_recovered(unit, sid, found, tables, options))
        result.accounting["recovered"] += len(found)
    result.rows = {name: b.tuples() for name, b in tables.items() if len(b)}
    return result


def _recovered(
    unit: Unit,
    sid: str,
    prompts: list[tuple[float, str]],
    tables: dict[str, TableBuffer],
    options: ParseOptions,
) -> ImportItem:
    session_id = ids.session_id(PROVIDER, sid)
    times = [_iso(ts) for ts, _ in prompts]
    previous: str | None = None  # the prompts of one thread, each following the one before
    for seq, ((ts, text), at) in enumerate(zip(prompts, times, strict=True)):
        key = f"history:{ts}:{seq}"
        message_id = ids.message_id(PROVIDER, sid, key)
        turn_id = ids.turn_id(PROVIDER, sid, key)
        tables["messages"].add(
            {
                "message_id": message_id,
                "session_id": session_id,
                "turn_id": turn_id,
                "source_message_id": key,
                "seq": seq,
                "role": "user",
                "message_type": "user",
                "content": cap(text, options.max_field),
                "created_at": at,
                "meta": {"source": "typed", "history_ts": ts},
                "metadata": {"recovered_from": "history"},
                "source_ref": unit.key,
            }
        )
        tables["turns"].add(
            {
                "turn_id": turn_id,
                "session_id": session_id,
                "source_turn_id": key,
                "parent_turn_id": previous,
                "seq": seq,
                "started_at": at,
                "completed_at": at,
                "status": "completed",
                "query_message_ids": [message_id],
                # history.jsonl keeps prompts only: the tokens are unknown (NULL), not 0, as
                # on the session row, so the session's totals still equal its turns' sums.
                "metadata": {"recovered_from": "history"},
            }
        )
        previous = turn_id
    first = prompts[0][1].strip().splitlines()[0] if prompts[0][1].strip() else None
    session = {
        "session_id": session_id,
        "source_provider": PROVIDER,
        "source_session_id": sid,
        "label": ids.session_label(PROVIDER, sid),
        "title": cap(first, 120) if first else None,
        "created_at": min(times),
        "updated_at": max(times),
        "turn_count": len(prompts),
        "message_count": len(prompts),
        "tool_call_count": 0,
        "metadata": {"recovered_from": "history", "prompts": len(prompts)},
        "source_path": unit.key,
    }
    fingerprint = combine([row_fingerprint(SESSIONS, session)])
    session["fingerprint"] = fingerprint
    return ImportItem(PROVIDER, sid, fingerprint, int(options.now * 1000), session, ())


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
