"""Parse one Claude Code transcript, or the part of it appended since its watermark."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.claude_code.builder import PROVIDER, STATE_SHAPE, SessionBuilder
from tracehouse.parsers.claude_code.identity import identity
from tracehouse.parsers.kit.jsonl_unit import parse_jsonl


def parse(unit: Unit, cursor_json: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    # The identity reads a subagent's .meta.json: only once the unit is known to have changed.
    return parse_jsonl(
        PROVIDER,
        unit,
        cursor_json,
        options,
        lambda state: SessionBuilder(identity(unit), state, options.max_field),
        STATE_SHAPE,
    )
