"""Gathering parse results into import batches: one transaction each, watermarks included.

Successive chunks of one unit that land in the same batch are merged: the later chunk's session
row and watermark win, and rows re-emitted by the later chunk replace the earlier versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from tracehouse.model.contract import ImportBatch, ImportItem, Reject, WatermarkUpdate
from tracehouse.model.tables import CONTENT_TABLES
from tracehouse.parsers.base import UnitResult

_TABLES = {t.name: t for t in CONTENT_TABLES.values()}


@dataclass
class PendingBatch:
    items: dict[str, ImportItem] = field(default_factory=dict)  # by unit key
    frames: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    watermarks: dict[str, WatermarkUpdate] = field(default_factory=dict)
    rejects: list[Reject] = field(default_factory=list)
    bytes: int = 0

    def add(self, result: UnitResult) -> None:
        key = result.unit.key
        self.bytes += result.bytes_read
        self.rejects.extend(result.rejects)
        if result.item is not None:
            self.items[key] = result.item
            self.watermarks.pop(key, None)
            for name, frame in result.frames.items():
                if frame.height:
                    self.frames.setdefault(name, []).append(frame)
        elif result.watermark is not None:
            if key in self.items:  # an earlier chunk's item carries the unit's cursor
                item = self.items[key]
                self.items[key] = ImportItem(
                    item.source_provider,
                    item.source_session_id,
                    item.fingerprint,
                    item.imported_at_ms,
                    item.session,
                    (result.watermark,),
                )
            else:
                self.watermarks[key] = result.watermark

    @property
    def empty(self) -> bool:
        return not (self.items or self.watermarks or self.rejects)

    def build(self, run_id: str, mode: str) -> ImportBatch:
        frames = {}
        for name, parts in self.frames.items():
            frame = pl.concat(parts, how="vertical") if len(parts) > 1 else parts[0]
            if len(parts) > 1:
                frame = frame.unique(
                    subset=list(_TABLES[name].primary_key), keep="last", maintain_order=True
                )
            frames[name] = frame
        return ImportBatch(
            items=tuple(self.items.values()),
            frames=frames,
            source="tracehouse",
            run_id=run_id,
            mode=mode,
            rejects=tuple(self.rejects),
            watermarks=tuple(self.watermarks.values()),
        )
