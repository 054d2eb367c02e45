"""How values reach SQLite's writer: bound without Python's adapter lookups, and the large texts
of a batch a parser process sends as their UTF-8 bytes.

Python's `sqlite3` binds an int, float, str or bytearray as it is and looks every other value up
in its adapter registry (a key tuple built, a dict missed, two attribute lookups) before binding
it: None and bytes included. A str is bound as its UTF-8, which CPython encodes (and keeps beside
the str) on the writer's core; a text the writer got by unpickling a batch was decoded from
UTF-8 there a moment before. Both are work the one writer does for every row, where the parsers
have cores to spare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tracehouse.model.columns import Table
from tracehouse.model.contract import ImportBatch
from tracehouse.model.tables import TABLES_BY_NAME
from tracehouse.search.sqlite_index import unspaced_sessions

# The columns that hold most of a batch's text: a tool's output and parameters, a message, a
# model's thinking (73% of the characters of the bench corpus's rows).
UTF8_COLUMNS: dict[str, tuple[str, ...]] = {
    "messages": ("content", "thinking"),
    "tool_calls": ("params", "result"),
}
_AT = {
    name: tuple(TABLES_BY_NAME[name].names.index(c) for c in columns)
    for name, columns in UTF8_COLUMNS.items()
}


def placeholder(table: Table, column: str) -> str:
    """A column's parameter in an insert: TEXT whether it comes as text or as its UTF-8 bytes
    (a CAST from BLOB to TEXT takes the bytes as they are, a CAST from TEXT to TEXT is none)."""
    return "CAST(? AS TEXT)" if column in UTF8_COLUMNS.get(table.name, ()) else "?"


def for_writer(batch: ImportBatch) -> ImportBatch:
    """A batch as a parser process sends it to SQLite's writer: with the sessions that hold
    unspaced scripts worked out (`ImportBatch.unspaced`), which the writer need not then (a
    tenth of its time), and its large texts as their UTF-8 bytes (`as_utf8`)."""
    return replace(batch, unspaced=unspaced_sessions(batch.rows), rows=as_utf8(batch.rows))


def as_utf8(rows: Mapping[str, list[tuple[Any, ...]]]) -> dict[str, list[tuple[Any, ...]]]:
    """A batch's rows (table → tuples in column order) with the text of UTF8_COLUMNS as its
    UTF-8 bytes, for a parser process to send SQLite's writer: the parser encodes each text once
    either way (pickling does), and the writer then neither decodes it to unpickle the batch
    nor encodes it again to bind it. On the bench corpus's batches, the writer alone took
    6% less time and unpickled them in 0.41 s instead of 0.57. An ASCII text is left as it is:
    CPython unpickles and binds it as cheaply as its bytes (the writer took as long either way),
    and the parser then rebuilds no row that holds only such texts (0.3 s to prepare the
    corpus's batches instead of 0.39, 0.38 s to pickle them instead of 0.49). A text that is not
    valid UTF-8 (a lone surrogate) leaves its row as it came, to be bound as it would have
    been."""
    out = dict(rows)
    for name, at in _AT.items():
        table_rows = rows.get(name)
        if table_rows:
            out[name] = [_encoded(row, at) for row in table_rows]
    return out


def _encoded(row: tuple[Any, ...], at: tuple[int, ...]) -> tuple[Any, ...]:
    values = None
    try:
        for i in at:
            value = row[i]
            if type(value) is str and not value.isascii():
                if values is None:
                    values = list(row)
                values[i] = value.encode()
    except UnicodeEncodeError:  # a lone surrogate: the row goes as it came
        return row
    return row if values is None else tuple(values)
