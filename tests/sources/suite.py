"""The source suite every parser passes (STYLE "Tests": one generated suite for all sources).

A parser's test module subclasses `SourceSuite` and provides three fixtures:
`parser` (the parser module), `units` (units discovered from its small fixtures under
tests/data), and `bad_unit` (a unit whose file holds malformed and unknown records, made in
tmp_path). The suite checks schemas, determinism, stable fingerprints, rejects that name their
file and line, tolerance of unknown records, and that parsing in chunks equals parsing whole.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracehouse.model.tables import CONTENT_TABLES
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore

TABLES = {t.name: t for t in CONTENT_TABLES.values()}


def parse_all(
    parser: Any, unit: Unit, budget: int = 1 << 30
) -> tuple[Any, dict[str, pl.DataFrame], list]:
    """Parse a unit to its end in chunks of about `budget` bytes; rows merged as a batch would.
    Returns the unit's session item (the last, for a unit of one session)."""
    items, frames, rejects = parse_all_items(parser, unit, budget)
    return (items[-1] if items else None), frames, rejects


def parse_all_items(
    parser: Any, unit: Unit, budget: int = 1 << 30
) -> tuple[list[Any], dict[str, pl.DataFrame], list]:
    """As `parse_all`, with every session item of the unit (a database holds many), by id."""
    options = ParseOptions(budget_bytes=budget, now=time.time() + 3600)
    cursor = None
    items: dict[str, Any] = {}
    parts: dict[str, list[pl.DataFrame]] = {}
    rejects: list = []
    for _ in range(100_000):
        result: UnitResult = parser.parse(unit, cursor, options)
        rejects.extend(result.rejects)
        found = [result.item] if result.item is not None else []
        found += result.extra
        for item in found:
            items.pop(item.source_session_id, None)
            items[item.source_session_id] = item
        if found:
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
    return list(items.values()), frames, rejects


class SourceSuite:
    def test_frames_match_the_table_schemas(self, parser, units):
        assert units, "the fixtures yield units"
        for unit in units:
            _items, frames, _ = parse_all_items(parser, unit)
            for name, frame in frames.items():
                assert frame.schema == pl.Schema(TABLES[name].schema), (unit.key, name)

    def test_output_is_deterministic(self, parser, units):
        for unit in units:
            first = parse_all_items(parser, unit)
            second = parse_all_items(parser, unit)
            assert _comparable(first) == _comparable(second), unit.key

    def test_fingerprints_are_stable_across_processes(self, parser, units):
        here = sorted(fp for unit in units for fp in _fingerprints(parse_all_items(parser, unit)))
        script = (
            "import sys, time, pickle\n"
            "from tests.sources.suite import parse_all_items, _fingerprints\n"
            f"import {parser.__name__} as parser\n"
            "units = pickle.loads(sys.stdin.buffer.read())\n"
            "fps = sorted(fp for u in units for fp in _fingerprints(parse_all_items(parser, u)))\n"
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

    def test_parsing_leaves_no_reference_cycle(self, parser, units):
        # A cycle keeps a unit's builder and every row it built alive until the collector's
        # next full pass; the sync runs the collector seldom (`pipeline.collect_less`).
        gc.collect()
        gc.disable()
        try:
            for unit in units:
                cursor = None
                while True:
                    result = parser.parse(unit, cursor, ParseOptions(full=True))
                    if result.done:
                        break
                    cursor = result.cursor
                del result
            assert gc.collect() == 0
        finally:
            gc.enable()

    # Where a reject points: a line of a file, or a key of a database.
    reject_locations: tuple[str, ...] = ("line ",)

    def test_malformed_records_become_rejects_naming_file_and_line(self, parser, bad_unit):
        items, _frames, rejects = parse_all_items(parser, bad_unit)
        assert rejects, "malformed records are rejected"
        for reject in rejects:
            assert reject.unit_key == bad_unit.key
            assert reject.location.startswith(self.reject_locations)
            assert reject.reason
        assert items, "the good records around them are still imported"

    def test_unknown_record_types_are_kept_not_fatal(self, parser, bad_unit):
        items, frames, _rejects = parse_all_items(parser, bad_unit)
        kept = [str(item.session.get("metadata")) for item in items]
        kept += [str(frame.get_column("metadata").to_list()) for frame in frames.values()
                 if "metadata" in frame.columns]  # fmt: skip
        assert any("totally-new-record" in text for text in kept)

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
            whole = parse_all_items(parser, unit)
            chunked = parse_all_items(parser, unit, budget)
            assert _comparable(chunked) == _comparable(whole), (unit.key, budget)


def _comparable(parsed: tuple[list[Any], dict[str, pl.DataFrame], list]) -> Any:
    items, frames, rejects = parsed
    return (
        [(item.fingerprint, dict(item.session)) for item in items],
        {name: frame.rows() for name, frame in sorted(frames.items())},
        [(r.location, r.reason) for r in rejects],
    )


def _fingerprints(parsed: tuple[list[Any], dict[str, pl.DataFrame], list]) -> list[str]:
    items, frames, _ = parsed
    out = [item.fingerprint for item in items]
    for frame in frames.values():
        out.extend(frame.get_column("fingerprint").to_list())
    return out


def backfill_twice(provider: str, root: Path, ledger: Path) -> tuple[int, int]:
    """A backfill of `root` through the whole pipeline, then the same again: (sessions imported,
    children linked to their parents). The rerun must read and write nothing, and no file under
    the root may have appeared, vanished or changed name (sources are read-only)."""
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    store = SqliteStore(ledger)
    options = SyncOptions(sources={provider: [root]}, workers=0)
    first = sync(store, options)
    assert first.ok and not first.rejects, first.rejects
    (linked,) = store.query("SELECT count(*) AS n FROM sessions c JOIN sessions p"
                            " ON p.session_id = c.parent_session_id")  # fmt: skip
    again = sync(store, options)
    assert again.parsed == 0 and again.rows_written == 0
    store.close()
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before
    return first.statuses["imported"], linked["n"]
