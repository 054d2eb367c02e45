"""A source whose unit is read whole on every change (a JSON document rewritten as it grows, a
Markdown log of many sessions): read, wait out a half-written rewrite, build each session with
a `Conversation`, attach them with one watermark, and turn every problem into a reject naming
its place. A source supplies only `build`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tracehouse.model.contract import Clear, Reject
from tracehouse.parsers.base import SHAPE_ERRORS, ParseOptions, Unit, UnitResult, session_item
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.jsonl_unit import read_whole, refused, whole_cursor, wm
from tracehouse.state.watermark import Action


@dataclass
class Read:
    """What `build` made of a document: its sessions (each with the fields its row adds), the
    problems found (place, reason), and whether it looks cut short (a rewrite in progress)."""

    sessions: list[tuple[Conversation, dict[str, Any]]] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    incomplete: bool = False
    accounting: dict[str, int] = field(default_factory=dict)
    # Bytes read from files beside the unit's own (OpenHands' events): a run's bytes read too.
    also_read: int = 0

    def count(self, what: str) -> None:
        self.accounting[what] = self.accounting.get(what, 0) + 1


Build = Callable[[Unit, bytes, ParseOptions], Read]
# Every place a document's rejects are filed under: a re-read clears the old ones there.
PLACES = ("document", "[", "timeline[", "line", "session", "message")


def parse_document(
    provider: str,
    unit: Unit,
    cursor_json: Mapping[str, Any] | None,
    options: ParseOptions,
    build: Build,
) -> UnitResult:
    found = read_whole(provider, unit, cursor_json, options)
    if isinstance(found, UnitResult):
        return found
    st, data = found
    try:
        read = build(unit, data, options)
    except SHAPE_ERRORS as exc:
        return refused(provider, unit, exc)
    quiet = options.now - st.st_mtime_ns / 1e9 >= options.quiet_seconds
    size = len(data) + read.also_read
    if read.incomplete and not quiet:  # come back when the agent has finished writing it
        return UnitResult(unit, Action.WAIT, bytes_read=size, mtime_ns=st.st_mtime_ns)
    cursor = whole_cursor(st, data)
    watermark = wm(provider, unit, cursor)
    result = UnitResult(
        unit, Action.FULL, bytes_read=size, cursor=cursor.to_json(), mtime_ns=st.st_mtime_ns
    )
    result.clear = Clear(provider, unit.key, from_line=1, keys=PLACES)
    result.accounting.update(read.accounting)
    try:
        for talk, fields in read.sessions:
            talk.finish()
            if not talk.has_content():
                result.accounting["empty session"] += 1
                continue
            item = session_item(provider, talk.sid, talk.session_row(**fields),
                                [cursor.tail_hash], options.now)  # fmt: skip
            result.extra.append(item)
            for buffer in talk.buffers():
                if len(buffer):
                    result.rows.setdefault(buffer.table.name, []).extend(buffer.tuples())
            result.accounting["session"] += 1
    except SHAPE_ERRORS as exc:
        return refused(provider, unit, exc)
    if len(result.extra) == 1:  # one session: it carries the watermark itself
        only = result.extra.pop()
        result.item = replace(only, watermarks=(watermark,))
    else:
        result.watermark = watermark
    for place, reason in read.problems:
        result.rejects.append(Reject(provider, unit.key, place, reason))
        result.accounting["rejected"] += 1
    return result
