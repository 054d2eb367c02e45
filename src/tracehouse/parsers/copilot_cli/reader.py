"""A Copilot CLI unit → rows: an event log (`events.py`) or a legacy document (`legacy.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.copilot_cli import legacy
from tracehouse.parsers.copilot_cli.events import EventLog
from tracehouse.parsers.copilot_cli.layout import PROVIDER
from tracehouse.parsers.kit.document import parse_document
from tracehouse.parsers.kit.jsonl_session import jsonl_parser

_events = jsonl_parser(EventLog)


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    if unit.info.get("form") == "legacy":
        return parse_document(PROVIDER, unit, cursor, options, legacy.build)
    return _events(unit, cursor, options)
