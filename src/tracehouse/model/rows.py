"""Building frames: column buffers with the table's explicit schema and per-row fingerprints.

Parsers accumulate rows here (DESIGN §8: column lists, then one frame per batch); the fingerprint
of each row is computed as it is added, over the table's content columns in declaration order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson
import polars as pl

from tracehouse.model.fingerprint import canonical_json, fingerprint_values
from tracehouse.model.tables import Kind, Table


def json_text(value: Any) -> str | None:
    """The stored text of a JSON column: canonical, so equal content gives equal text."""
    if value is None or isinstance(value, str):
        return value
    return canonical_json(value).decode()


def row_fingerprint(table: Table, row: Mapping[str, Any]) -> str:
    """Over the content columns; JSON columns in their canonical text, whatever their key order."""
    return fingerprint_values(
        [
            json_text(row.get(c.name)) if c.kind is Kind.JSON else row.get(c.name)
            for c in table.columns
            if c.content
        ]
    )


class TableBuffer:
    """Rows of one table by primary key: a later row with the same key replaces the earlier."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._json = [c.name for c in table.columns if c.kind is Kind.JSON]
        self._rows: dict[tuple[Any, ...], dict[str, Any]] = {}

    def add(self, row: dict[str, Any]) -> dict[str, Any]:
        for name in self._json:
            value = row.get(name)
            if value is not None and not isinstance(value, str):
                row[name] = json_text(value)
        if "fingerprint" in self.table.names:
            row["fingerprint"] = row_fingerprint(self.table, row)
        self._rows[tuple(row.get(k) for k in self.table.primary_key)] = row
        return row

    def extend(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            self.add(row)

    def __len__(self) -> int:
        return len(self._rows)

    def rows(self) -> list[dict[str, Any]]:
        return list(self._rows.values())

    def frame(self) -> pl.DataFrame:
        return to_frame(self.table, self._rows.values())


def to_frame(table: Table, rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    names = table.names
    columns: dict[str, list[Any]] = {n: [] for n in names}
    for row in rows:
        for n in names:
            columns[n].append(row.get(n))
    return pl.DataFrame(columns, schema=table.schema)


def loads_json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)
