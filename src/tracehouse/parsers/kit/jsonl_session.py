"""A JSONL source in two parts: what its records mean (`feed`) and what its session row adds
(`fields`). Reading, appends, budgets, rejects and resume state come from `jsonl_unit`; turns,
messages, calls, tokens and the title from `Conversation`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from tracehouse.model.rows import TableBuffer
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.jsonl_unit import parse_jsonl


class JsonlSession:
    """One session per JSONL unit, resumable. A subclass sets `PROVIDER`, implements `feed`
    (returning how a record was accounted for) and, where it has them, `fields`. What it must
    remember across an append beyond the conversation goes in `self.kept` (JSON-safe); one that
    comes to keep another state raises `STATE_SHAPE` (`jsonl_unit.py`)."""

    PROVIDER: ClassVar[str]
    STATE_SHAPE: ClassVar[int] = 0

    def __init__(self, unit: Unit, state: Mapping[str, Any] | None, max_field: int) -> None:
        s = state or {}
        self.unit = unit
        self.max_field = max_field
        self.kept: dict[str, Any] = dict(s.get("kept") or {})
        self.talk = Conversation(
            self.PROVIDER, self.session_key(unit), unit.key, max_field, s.get("talk")
        )

    def session_key(self, unit: Unit) -> str:
        """The session's source id; by default the file's name without its suffix."""
        return str(unit.info.get("session") or unit.path.stem)

    @property
    def source_session_id(self) -> str:
        return self.talk.sid

    def feed(self, record: dict[str, Any], offset: int) -> str:
        raise NotImplementedError

    def fields(self) -> dict[str, Any]:
        return {}

    def finish(self) -> dict[str, Any]:
        return {"talk": self.talk.finish(), "kept": self.kept}

    def has_content(self) -> bool:
        return self.talk.has_content()

    def session_row(self) -> dict[str, Any]:
        return self.talk.session_row(**self.fields())

    def buffers(self) -> Iterable[TableBuffer]:
        return self.talk.buffers()


def jsonl_parser(
    session: type[JsonlSession],
) -> Callable[[Unit, Mapping[str, Any] | None, ParseOptions], UnitResult]:
    """The `parse` of a source whose units are JSONL files of one session each."""

    def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
        return parse_jsonl(
            session.PROVIDER, unit, cursor, options,
            lambda state: session(unit, state, options.max_field), session.STATE_SHAPE,
        )  # fmt: skip

    return parse


def text_of(parts: Any, kinds: tuple[str, ...] = ("text",), key: str = "text") -> str:
    """The text of a list of content parts (`[{type: text, text}]`), or of a plain string."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    out = [
        str(p.get(key))
        for p in parts
        if isinstance(p, dict) and p.get("type", "text") in kinds and p.get(key)
    ]
    return "\n\n".join(out)
