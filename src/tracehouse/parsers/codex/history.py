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
from tracehouse.model.rows import TableBuffer
from tracehouse.model.tables import MESSAGES, TURNS
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.codex.context import rollout_paths
from tracehouse.parsers.codex.records import PROVIDER, thread_id_of
from tracehouse.parsers.kit.jsonl import loads
from tracehouse.parsers.kit.jsonl_unit import read_whole, reject, whole_cursor, wm
from tracehouse.parsers.kit.recovered import Prompt, add_prompts, recovered_item
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
    times = [_iso(ts) for ts, _ in prompts]
    add_prompts(
        tables,
        PROVIDER,
        sid,
        [
            Prompt(f"history:{ts}:{seq}", at, text, {"source": "typed", "history_ts": ts})
            for seq, ((ts, text), at) in enumerate(zip(prompts, times, strict=True))
        ],
        "history",
        unit.key,
        options.max_field,
    )
    first = prompts[0][1].strip().splitlines()[0] if prompts[0][1].strip() else None
    session = {
        "label": ids.session_label(PROVIDER, sid),
        "title": cap(first, 120) if first else None,
        "created_at": min(times),
        "updated_at": max(times),
        "metadata": {"recovered_from": "history", "prompts": len(prompts)},
        "source_path": unit.key,
    }
    return recovered_item(PROVIDER, sid, session, len(prompts), int(options.now * 1000))


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
