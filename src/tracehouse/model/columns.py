"""A table's declaration: its columns, their kinds, and what a row's fingerprint covers.

`model/tables.py` declares the ledger's tables with these; everything else (polars schemas, DDL,
fingerprints, the wire contract) is derived from the declarations.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


class Kind(Enum):
    TEXT = "text"
    INT = "int"
    BOOL = "bool"
    JSON = "json"  # JSON text in the store and in frames; an object or list in the JSON contract

    @property
    def dtype(self) -> type[pl.DataType]:
        # polars is imported where frames are built, not by every command that reads a table
        import polars as pl

        return {
            Kind.TEXT: pl.String,
            Kind.INT: pl.Int64,
            Kind.BOOL: pl.Boolean,
            Kind.JSON: pl.String,
        }[self]


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind = Kind.TEXT
    required: bool = False
    # Columns outside the content: provenance and bookkeeping that change without the content
    # changing, so they are left out of the row's fingerprint.
    content: bool = True
    choices: tuple[str, ...] = ()
    # Content appended after fingerprints were first stored: in a row's fingerprint only when
    # set, so every row stored before the column existed keeps its fingerprint.
    late: bool = False
    # "table.column" this column points at: declared in the SQLite schema for the tools that
    # follow links (Datasette), never enforced (rows arrive children first, and a row may point
    # at one another import has not brought yet).
    references: str | None = None


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @cached_property
    def content_indexes(self) -> tuple[int, ...]:
        """The content columns a fingerprint always covers, as positions in a row tuple."""
        return tuple(i for i, c in enumerate(self.columns) if c.content and not c.late)

    @cached_property
    def late_content(self) -> tuple[tuple[int, str], ...]:
        return tuple((i, c.name) for i, c in enumerate(self.columns) if c.content and c.late)

    @cached_property
    def text_indexes(self) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.columns) if c.kind is Kind.TEXT)

    @cached_property
    def json_indexes(self) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.columns) if c.kind is Kind.JSON)

    @cached_property
    def schema(self) -> dict[str, type[pl.DataType]]:
        return {c.name: c.kind.dtype for c in self.columns}

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def empty(self) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame(schema=self.schema)
