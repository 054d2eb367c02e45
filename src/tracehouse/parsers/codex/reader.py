"""Parse one Codex unit: a rollout (G1–G3 JSONL, or a G0 JSON file) or the prompt history."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.codex import history, legacy
from tracehouse.parsers.codex.builder import STATE_SHAPE, RolloutBuilder
from tracehouse.parsers.codex.context import RolloutContext
from tracehouse.parsers.codex.records import PROVIDER
from tracehouse.parsers.kit.jsonl_unit import parse_jsonl


def parse(unit: Unit, cursor_json: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    kind = unit.info.get("kind")
    if kind == "history":
        return history.parse(unit, cursor_json, options)
    ctx = RolloutContext(unit.key, str(unit.info["home"]), unit.info.get("thread"))
    if kind == "legacy":
        return legacy.parse(unit, cursor_json, options, ctx)
    return parse_jsonl(
        PROVIDER,
        unit,
        cursor_json,
        options,
        lambda state: RolloutBuilder(ctx, state, options.max_field),
        STATE_SHAPE,
    )
