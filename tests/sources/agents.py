"""Helpers for the tests of the agents read through the parser kit: a unit's sessions with their
own rows, and a bad unit made from a good one."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import polars as pl

from tests.sources.suite import parse_all_items
from tracehouse.parsers.base import Unit


def sessions(parser: Any, units: list[Unit]) -> dict[str, tuple[Any, dict[str, pl.DataFrame]]]:
    """Source session id → (its item, its rows per table); no unit may have rejects."""
    out = {}
    for unit in units:
        items, frames, rejects = parse_all_items(parser, unit)
        assert rejects == [], rejects
        for item in items:
            of = {n: f.filter(f["session_id"] == item.session_id) for n, f in frames.items()}
            out[item.source_session_id] = (item, of)
    return out


def spoiled_copy(source: Path, target: Path, lines: list[str], at: int = 1) -> Path:
    """A copy of a JSONL file with `lines` put in after its line `at`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    kept = target.read_text().splitlines()
    target.write_text("\n".join([*kept[:at], *lines, *kept[at:]]) + "\n")
    return target
