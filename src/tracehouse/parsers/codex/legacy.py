"""G0: one JSON object per rollout, `{session: {id, timestamp, instructions}, items: [...]}`.

Written whole and never appended, so a changed file is parsed again from the start. Its items
are chat-completions shaped (`role`, `content`, `tool_calls`, `tool_call_id`, `reasoning`);
they are fed to the rollout builder as the response items they correspond to, each keyed by
its position in `items`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tracehouse.model.contract import Clear, Reject
from tracehouse.parsers.base import SHAPE_ERRORS, ParseOptions, Unit, UnitResult, shape_error
from tracehouse.parsers.codex.builder import RolloutBuilder
from tracehouse.parsers.codex.context import RolloutContext
from tracehouse.parsers.kit.jsonl_unit import attach, read_whole, refused, whole_cursor, wm
from tracehouse.parsers.kit.untrusted import decode_json, items, mapping, place
from tracehouse.state.watermark import Action

PROVIDER = "codex"


def parse(
    unit: Unit, cursor_json: Mapping[str, Any] | None, options: ParseOptions, ctx: RolloutContext
) -> UnitResult:
    found = read_whole(PROVIDER, unit, cursor_json, options)
    if isinstance(found, UnitResult):
        return found
    st, data = found
    cursor = whole_cursor(st, data)
    digest = cursor.tail_hash
    result = UnitResult(
        unit, Action.FULL, bytes_read=len(data), cursor=cursor.to_json(), mtime_ns=st.st_mtime_ns
    )
    result.clear = Clear(PROVIDER, unit.key, from_line=1, keys=("items[", "document"))
    document, problem = decode_json(data)
    if problem is None and not isinstance(document.get("items"), list):
        problem = "`items` is not an array"
    if problem is not None:
        reason = f"not a {{session, items}} rollout: {problem}"
        result.rejects.append(Reject(PROVIDER, unit.key, place(problem, "document"), reason))
        result.accounting["rejected"] += 1
        result.watermark = wm(PROVIDER, unit, cursor)
        return result
    builder = RolloutBuilder(ctx, None, options.max_field)
    builder.agg.generation = "G0"
    session = document.get("session")
    if isinstance(session, dict):
        builder.feed({k: v for k, v in session.items() if k != "type"}, 0)
    for index, item in enumerate(document["items"], start=1):
        try:
            for record in _as_items(item):
                result.accounting[builder.feed(record, index)] += 1
        except SHAPE_ERRORS as exc:
            result.rejects.append(
                Reject(PROVIDER, unit.key, f"items[{index - 1}]", shape_error(exc))
            )
            result.accounting["rejected"] += 1
    try:
        builder.finish()
        attach(PROVIDER, result, builder, wm(PROVIDER, unit, cursor), [digest], options)
    except SHAPE_ERRORS as exc:
        return refused(PROVIDER, unit, exc)
    return result


def _as_items(item: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(item, dict):
        yield {"type": "unknown", "value": item}
        return
    role = item.get("role")
    if role == "tool":
        yield {"type": "function_call_output", "call_id": item.get("tool_call_id"),
               "output": item.get("content")}  # fmt: skip
        return
    if "role" not in item:
        yield item
        return
    if item.get("reasoning"):
        yield {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": item["reasoning"]}],
        }
    content = item.get("content")
    if content or role != "assistant":
        yield {"type": "message", "role": role, "content": content}
    for call in items(item.get("tool_calls")):
        function = mapping(call.get("function")) if isinstance(call, dict) else {}
        yield {
            "type": "function_call",
            "name": function.get("name"),
            "arguments": function.get("arguments"),
            "call_id": call.get("id") if isinstance(call, dict) else None,
        }
