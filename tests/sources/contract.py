"""The source contract every parser passes (STYLE "Tests": one generated suite for all sources).

A parser's test module subclasses `SourceContract` and provides three fixtures:
`parser` (the parser module), `units` (units discovered from its small fixtures under
tests/data), and `bad_unit` (a unit whose file holds malformed and unknown records, made in
tmp_path). The suite checks schemas, determinism, stable fingerprints, rejects that name their
file and line, tolerance of unknown records, and that parsing in chunks equals parsing whole.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracehouse.model.tables import CONTENT_TABLES
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult

TABLES = {t.name: t for t in CONTENT_TABLES.values()}


def parse_all(
    parser: Any, unit: Unit, budget: int = 1 << 30
) -> tuple[Any, dict[str, pl.DataFrame], list]:
    """Parse a unit to its end in chunks of about `budget` bytes; rows merged as a batch would."""
    options = ParseOptions(budget_bytes=budget, now=time.time() + 3600)
    cursor = None
    item = None
    parts: dict[str, list[pl.DataFrame]] = {}
    rejects: list = []
    for _ in range(100_000):
        result: UnitResult = parser.parse(unit, cursor, options)
        rejects.extend(result.rejects)
        if result.item is not None:
            item = result.item
            for name, frame in result.frames().items():
                parts.setdefault(name, []).append(frame)
        cursor = result.cursor
        if result.done:
            break
    frames = {}
    for name, frames_of in parts.items():
        merged = pl.concat(frames_of)
        frames[name] = merged.unique(
            subset=list(TABLES[name].primary_key), keep="last", maintain_order=True
        ).sort(list(TABLES[name].primary_key))
    return item, frames, rejects


class SourceContract:
    def test_frames_match_the_table_schemas(self, parser, units):
        assert units, "the fixtures yield units"
        for unit in units:
            _item, frames, _ = parse_all(parser, unit)
            for name, frame in frames.items():
                assert frame.schema == pl.Schema(TABLES[name].schema), (unit.key, name)

    def test_output_is_deterministic(self, parser, units):
        for unit in units:
            first = parse_all(parser, unit)
            second = parse_all(parser, unit)
            assert _comparable(first) == _comparable(second), unit.key

    def test_fingerprints_are_stable_across_processes(self, parser, units):
        here = sorted(fp for unit in units for fp in _fingerprints(parse_all(parser, unit)))
        script = (
            "import sys, time, pickle\n"
            "from tests.sources.contract import parse_all, _fingerprints\n"
            f"import {parser.__name__} as parser\n"
            "units = pickle.loads(sys.stdin.buffer.read())\n"
            "fps = sorted(fp for u in units for fp in _fingerprints(parse_all(parser, u)))\n"
            "print('\\n'.join(fps))\n"
        )
        import pickle

        out = subprocess.run(
            [sys.executable, "-c", script],
            input=pickle.dumps(units),
            capture_output=True,
            check=True,
        )
        assert out.stdout.decode().split() == here

    def test_malformed_records_become_rejects_naming_file_and_line(self, parser, bad_unit):
        item, _frames, rejects = parse_all(parser, bad_unit)
        assert rejects, "malformed records are rejected"
        for reject in rejects:
            assert reject.unit_key == bad_unit.key
            assert reject.location.startswith("line ")
            assert reject.reason
        assert item is not None, "the good records around them are still imported"

    def test_unknown_record_types_are_kept_not_fatal(self, parser, bad_unit):
        item, _frames, _rejects = parse_all(parser, bad_unit)
        assert "totally-new-record" in str(item.session.get("metadata"))

    # Each source's subclass runs this with its own parser fixture: one test method, several
    # executors, no state shared between them.
    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.differing_executors,
        ],
    )
    @given(budget=st.integers(min_value=1, max_value=6000))
    def test_parsing_in_chunks_equals_parsing_whole(self, parser, units, budget):
        for unit in units:
            whole = parse_all(parser, unit)
            chunked = parse_all(parser, unit, budget)
            assert _comparable(chunked) == _comparable(whole), (unit.key, budget)


def _comparable(parsed: tuple[Any, dict[str, pl.DataFrame], list]) -> Any:
    item, frames, rejects = parsed
    return (
        None if item is None else (item.fingerprint, dict(item.session)),
        {name: frame.rows() for name, frame in sorted(frames.items())},
        [(r.location, r.reason) for r in rejects],
    )


def _fingerprints(parsed: tuple[Any, dict[str, pl.DataFrame], list]) -> list[str]:
    item, frames, _ = parsed
    out = [] if item is None else [item.fingerprint]
    for frame in frames.values():
        out.extend(frame.get_column("fingerprint").to_list())
    return out
