"""Building frames: column buffers with the table's explicit schema and per-row fingerprints.

Parsers accumulate rows here (DESIGN §8: column lists, then one frame per batch); the fingerprint
of each row is computed as it is added, over the table's content columns in declaration order.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tracehouse.model import ids
from tracehouse.model.columns import Table
from tracehouse.model.fingerprint import canonical_json, fingerprint_values
from tracehouse.model.tables import TOKEN_COLUMNS

if TYPE_CHECKING:
    import polars as pl


def turn_row(
    provider: str,
    source_session_id: str,
    source_turn_id: str,
    seq: int,
    parent_turn_id: str | None,
    at: str | None = None,
    llm_provider: str | None = None,
) -> dict[str, Any]:
    """A new turn of a session read whole: no tokens recorded yet (NULL, not 0), no query or
    response, `completed` until a reply says otherwise."""
    return {
        "turn_id": ids.turn_id(provider, source_session_id, source_turn_id),
        "session_id": ids.session_id(provider, source_session_id),
        "source_turn_id": source_turn_id,
        "parent_turn_id": parent_turn_id,
        "seq": seq,
        "started_at": at,
        "completed_at": at,
        "model": None,
        "llm_provider": llm_provider,
        "status": "completed",
        "query_message_ids": [],
        "response_message_id": None,
        "metadata": None,
        **dict.fromkeys(TOKEN_COLUMNS),
    }


def add_tokens(row: dict[str, Any], counts: Iterable[tuple[str, int]]) -> None:
    """Add (column, count) pairs to a turn's token columns. A turn's counts stay NULL until a
    count is recorded, and counts that are all zero record nothing (what an agent writes for a
    reply that made no model call): a ledger's NULL means "not recorded", never 0."""
    counts = list(counts)
    if all(row.get(c) is None for c, _ in counts) and not any(n for _, n in counts):
        return
    for column, count in counts:
        row[column] = (row.get(column) or 0) + count


def recorded(totals: dict[str, int | None]) -> dict[str, int | None]:
    """A session's totals as counted by its parser: NULL each where nothing was recorded (every
    count 0), as the sums of its turns are (`token_sums`)."""
    return totals if any(totals.values()) else dict.fromkeys(totals)


def token_sums(turns: Iterable[Mapping[str, Any]]) -> dict[str, int | None]:
    """A session's token totals: each column the sum of its turns' recorded counts, NULL where
    no turn recorded one."""
    sums: dict[str, int | None] = dict.fromkeys(TOKEN_COLUMNS)
    for turn in turns:
        for column in TOKEN_COLUMNS:
            value = turn.get(column)
            if value is not None:
                sums[column] = (sums[column] or 0) + value
    return sums


def json_text(value: Any) -> str | None:
    """The stored text of a JSON column: canonical, so equal content gives equal text."""
    if value is None or isinstance(value, str):
        return value
    return canonical_json(value).decode()


def row_fingerprint(table: Table, row: Mapping[str, Any]) -> str:
    """Over the content columns; JSON columns in their canonical text, whatever their key order."""
    values = [row.get(n) for n in table.names]
    for i in table.json_indexes:
        values[i] = json_text(values[i])
    return fingerprint_values(content_values(table, values))


def content_values(
    table: Table,
    values: list[Any] | tuple[Any, ...],
    pick: Callable[[Sequence[Any]], tuple[Any, ...]] | None = None,
) -> list[Any]:
    """What a row's fingerprint covers, from its values in column order: every content column,
    then each late one that is set, as its name and value. `pick`: a picker of the content
    columns (`_picker`), for a caller that takes many rows of one table."""
    out = list(pick(values)) if pick is not None else [values[i] for i in table.content_indexes]
    for i, name in table.late_content:
        if values[i] is not None:
            out += [name, values[i]]
    return out


def _picker(indexes: tuple[int, ...]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """The values at `indexes` of a row, as a tuple, in one call in C."""
    if len(indexes) >= 2:
        return operator.itemgetter(*indexes)
    return lambda values: tuple(values[i] for i in indexes)


def _as_text(value: Any) -> str:
    """A record's value where text belongs (a `model` that is a number): kept as its text,
    never handed to a store as a number it may not hold (past 64 bits) or a type it rejects."""
    if isinstance(value, dict | list):
        return canonical_json(value).decode()
    return str(value)


def typed_row(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    """`row` with every text column's value as text (a session row a parser built from a
    record's values, which may be numbers where the table holds text)."""
    out = dict(row)
    for i in table.text_indexes:
        name = table.names[i]
        value = out.get(name)
        if value is not None and type(value) is not str:
            out[name] = _as_text(value)
    return out


class TableBuffer:
    """Rows of one table by primary key: a later row with the same key replaces the earlier.

    Rows are kept as given (the caller hands them over and must not change them afterwards);
    JSON columns are canonicalized and fingerprints computed once, for the final version of each
    row, when the tuples are taken.
    """

    def __init__(self, table: Table) -> None:
        self.table = table
        names = table.names
        self._names = names
        self._pk = table.primary_key
        self._json = table.json_indexes
        self._text = table.text_indexes
        self._fingerprint = names.index("fingerprint") if "fingerprint" in names else None
        self._pick_content = _picker(table.content_indexes)
        self._pick_text = _picker(table.text_indexes)
        self._rows: dict[Any, dict[str, Any]] = {}
        # Most tables have a one-column key: the row's value itself, not a tuple built per row.
        self._single = self._pk[0] if len(self._pk) == 1 else None

    def add(self, row: dict[str, Any]) -> dict[str, Any]:
        single = self._single
        key = row.get(single) if single is not None else tuple(map(row.get, self._pk))
        self._rows[key] = row
        return row

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._rows.values())

    def tuples(self) -> list[tuple[Any, ...]]:
        """Rows in the table's column order, ready for a frame or an `executemany`."""
        out = []
        pick_text, as_text = self._pick_text, {str, type(None)}
        for row in self._rows.values():
            values = list(map(row.get, self._names))
            for i in self._json:
                value = values[i]
                if value is not None and not isinstance(value, str):
                    values[i] = json_text(value)
            # Nearly every row's text columns hold text already: one check in C for all of them.
            if not as_text.issuperset(map(type, pick_text(values))):
                for i in self._text:
                    value = values[i]
                    if value is not None and type(value) is not str:
                        values[i] = _as_text(value)
            if self._fingerprint is not None:
                content = content_values(self.table, values, self._pick_content)
                values[self._fingerprint] = fingerprint_values(content)
            out.append(tuple(values))
        return out

    def frame(self) -> pl.DataFrame:
        return tuples_to_frame(self.table, self.tuples())


def tuples_to_frame(table: Table, rows: list[tuple[Any, ...]]) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(rows, schema=table.schema, orient="row")


def to_frame(table: Table, rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    import polars as pl

    names = table.names
    columns: dict[str, list[Any]] = {n: [] for n in names}
    for row in rows:
        for n in names:
            columns[n].append(row.get(n))
    return pl.DataFrame(columns, schema=table.schema)
