"""`logs.json`: every prompt typed into Gemini CLI (and its fork Qwen Code) in a project,
`[{sessionId, messageId, timestamp, type: "user", message}]` (gemini-cli `core/logger.ts`).

It keeps the prompts of sessions whose chat file is gone (the CLI's cleanup, a deleted
directory, a release that kept no chats): they become a session of their own,
`<sessionId>@logs`, flagged `metadata.recovered_from = "logs.json"`. Sessions with a chat file
anywhere under the root (`recorded`) are left to it. The file is rewritten whole: any change
parses it whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tracehouse.model import ids
from tracehouse.model.contract import Clear, ImportItem, Reject
from tracehouse.model.fields import cap
from tracehouse.model.rows import TableBuffer
from tracehouse.model.tables import MESSAGES, TURNS
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.kit.jsonl import blank
from tracehouse.parsers.kit.jsonl_unit import read_whole, whole_cursor, wm
from tracehouse.parsers.kit.recovered import Prompt, add_prompts, recovered_item
from tracehouse.parsers.kit.turn_rows import project_name
from tracehouse.parsers.kit.untrusted import decode_json, not_json, place
from tracehouse.state.watermark import Action

RECOVERED = "logs.json"


def parse_prompt_log(
    provider: str,
    unit: Unit,
    cursor_json: Mapping[str, Any] | None,
    options: ParseOptions,
    recorded: Callable[[str], bool],
) -> UnitResult:
    """A prompt log, its prompts of the sessions `recorded` says have no chat of their own
    brought back as sessions."""
    read = read_whole(provider, unit, cursor_json, options)
    if isinstance(read, UnitResult):
        return read
    st, data = read
    entries, problem = ([], None) if blank(data) else decode_json(data, list)
    recent = options.now - st.st_mtime_ns / 1e9 < options.quiet_seconds
    if problem is not None and recent and not_json(problem):  # perhaps read mid-rewrite
        return UnitResult(unit, Action.WAIT, bytes_read=len(data), mtime_ns=st.st_mtime_ns)
    cursor = whole_cursor(st, data)
    result = UnitResult(
        unit, Action.FULL, bytes_read=len(data), cursor=cursor.to_json(), mtime_ns=st.st_mtime_ns
    )
    result.watermark = wm(provider, unit, cursor)
    result.clear = Clear(provider, unit.key, from_line=1, keys=("document", "["))
    if problem is not None:
        where, reason = place(problem, "document"), f"not a list of prompts: {problem}"
        result.rejects.append(Reject(provider, unit.key, where, reason))
        result.accounting["rejected"] += 1
        return result
    prompts: dict[str, list[dict[str, Any]]] = {}
    for index, entry in enumerate(entries):
        if not _is_prompt(entry):
            reason = "not a prompt (needs sessionId, timestamp and message)"
            result.rejects.append(Reject(provider, unit.key, f"[{index}]", reason))
            result.accounting["rejected"] += 1
            continue
        prompts.setdefault(entry["sessionId"], []).append(entry)
        result.accounting["prompt"] += 1
    tables = {t.name: TableBuffer(t) for t in (MESSAGES, TURNS)}
    for sid, found in sorted(prompts.items()):
        if recorded(sid):
            continue
        result.extra.append(_recovered(provider, unit, sid, found, tables, options))
        result.accounting["recovered"] += len(found)
    result.rows = {name: b.tuples() for name, b in tables.items() if len(b)}
    return result


def _is_prompt(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("sessionId"), str)
        and bool(entry["sessionId"])
        and isinstance(entry.get("timestamp"), str)
        and isinstance(entry.get("message"), str)
    )


def _recovered(
    provider: str,
    unit: Unit,
    sid: str,
    prompts: list[dict[str, Any]],
    tables: dict[str, TableBuffer],
    options: ParseOptions,
) -> ImportItem:
    source_id = f"{sid}@logs"
    prompts = sorted(prompts, key=lambda p: p["timestamp"])
    add_prompts(
        tables,
        provider,
        source_id,
        [
            Prompt(f"log:{p.get('messageId')}:{p['timestamp']}", p["timestamp"], p["message"],
                   {"source": "typed"})
            for p in prompts
        ],
        RECOVERED,
        f"{unit.key}#{sid}",
        options.max_field,
    )  # fmt: skip
    text = prompts[0]["message"].strip()
    workspace = unit.info.get("workspace")
    session = {
        "label": ids.session_label(provider, sid),
        "title": cap(text.splitlines()[0], 200) if text else None,
        "created_at": prompts[0]["timestamp"],
        "updated_at": prompts[-1]["timestamp"],
        "workspace_path": workspace,
        "project": project_name(workspace),
        "metadata": {"recovered_from": RECOVERED, "prompts": len(prompts), "session_id": sid},
        "source_path": unit.key,
    }  # fmt: skip
    return recovered_item(provider, source_id, session, len(prompts), int(options.now * 1000))
