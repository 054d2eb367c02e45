"""The open PostgreSQL transaction as the store-neutral SQL of `store/tombstones.py` and
`store/labels.py` writes through it, with sqlite3-style `?` placeholders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

Conn = psycopg.Connection[tuple[Any, ...]]


def placeholders(sql: str) -> str:
    """The read side writes `?` placeholders (sqlite3's style); psycopg takes `%s`. A `%` in the
    text itself is doubled, and `?` inside a quoted literal is left alone."""
    out, quoted = [], False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        if ch == "%":
            out.append("%%")
        elif ch == "?" and not quoted:
            out.append("%s")
        else:
            out.append(ch)
    return "".join(out)


class PgTx:
    """The open transaction, as `store/tombstones.py` writes through it."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any]) -> int:
        return self.conn.execute(placeholders(sql), tuple(params)).rowcount  # type: ignore[arg-type]

    def query(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cursor = self.conn.execute(placeholders(sql), tuple(params))  # type: ignore[arg-type]
        names = [d.name for d in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self.conn.execute(placeholders(sql), tuple(params)).fetchall()  # type: ignore[arg-type]

    def delete_rows(self, table: str, where: str, params: Sequence[Any]) -> int:
        return self.execute(f"DELETE FROM {table} WHERE {where}", params)
