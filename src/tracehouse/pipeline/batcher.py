"""Gathering parse results into import batches: one transaction each, watermarks included.

Successive chunks of one unit that land in the same batch are merged: the later chunk's session
row and watermark win, and rows re-emitted by the later chunk replace the earlier versions.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tracehouse.model.contract import Clear, ImportBatch, ImportItem, Reject, WatermarkUpdate
from tracehouse.model.tables import TABLES_BY_NAME
from tracehouse.parsers.base import UnitResult


@dataclass
class PendingBatch:
    items: dict[str, ImportItem] = field(default_factory=dict)  # by unit key
    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    watermarks: dict[str, WatermarkUpdate] = field(default_factory=dict)
    rejects: list[Reject] = field(default_factory=list)
    clears: list[Clear] = field(default_factory=list)
    bytes: int = 0
    repeated: bool = False  # a unit gave more than one chunk: rows may repeat by key

    def add(self, result: UnitResult) -> None:
        key = result.unit.key
        self.bytes += result.bytes_read
        self.rejects.extend(result.rejects)
        if result.clear is not None:
            self.clears.append(result.clear)
        for extra in result.extra:  # a unit holding many sessions (a prompt history)
            self.items[f"{key}\x1f{extra.source_session_id}"] = extra
        if result.extra and result.item is None:
            for name, rows in result.rows.items():
                self.rows.setdefault(name, []).extend(rows)
        if result.item is not None:
            self.repeated |= key in self.items
            self.items[key] = result.item
            self.watermarks.pop(key, None)
            for name, rows in result.rows.items():
                self.rows.setdefault(name, []).extend(rows)
        elif result.watermark is not None:
            if key in self.items:  # an earlier chunk's item carries the unit's cursor
                item = self.items[key]
                self.items[key] = dataclasses.replace(item, watermarks=(result.watermark,))
            else:
                self.watermarks[key] = result.watermark

    @property
    def empty(self) -> bool:
        return not (self.items or self.watermarks or self.rejects or self.clears)

    def build(self, run_id: str, mode: str) -> ImportBatch:
        rows = self.rows
        if self.repeated:  # the later chunk's version of a row wins
            rows = {name: _last_by_key(TABLES_BY_NAME[name].primary_key, name, found)
                    for name, found in rows.items()}  # fmt: skip
        return ImportBatch(
            items=tuple(self.items.values()),
            rows=rows,
            source="tracehouse",
            run_id=run_id,
            mode=mode,
            rejects=tuple(self.rejects),
            watermarks=tuple(self.watermarks.values()),
            clears=tuple(self.clears),
        )


def _last_by_key(
    key: tuple[str, ...], table: str, rows: list[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """Rows with a repeated primary key: the last one stays, in its first one's place."""
    names = TABLES_BY_NAME[table].names
    index = [names.index(k) for k in key]
    kept: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for row in rows:
        kept[tuple(row[i] for i in index)] = row
    return list(kept.values())
