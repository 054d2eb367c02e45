"""Foreign keys in the SQLite schema, declared for the tools that follow them and never enforced.

Datasette, sqlite-utils and DB browsers read `PRAGMA foreign_key_list` to link a message to its
session, a tool call to its message, a run's rejects to their run. The ledger declares the links
`model/tables.py` names (`Column.references`), but SQLite enforces none of them unless a
connection turns `foreign_keys` on, which tracehouse never does: an import writes a session's
rows children first, a subagent may point at a parent a later import brings, and a session that
was deleted leaves its history rows behind.

SQLite cannot add a constraint with ALTER TABLE. A ledger made before schema 16 gets them the way
SQLite documents for changes that leave the stored rows as they are (`ALTER TABLE`, "making other
kinds of table schema changes"): its `CREATE TABLE` text is rewritten in `sqlite_schema` under
`PRAGMA writable_schema`, in the migration's transaction, with the schema version bumped so that
every other connection reads the new text. The search indexes' text is rewritten alike.
"""

from __future__ import annotations

import re
import sqlite3

from tracehouse.model.columns import Column, Table
from tracehouse.model.tables import ALL_TABLES

_QUOTED_CONTENT = re.compile(r"content='(\w+)'")


def clause(column: Column) -> str:
    """The REFERENCES clause of a column's definition ('' for a column that links nowhere)."""
    if column.references is None:
        return ""
    table, _, key = column.references.partition(".")
    return f" REFERENCES {table}({key})"


def _declared(sql: str, table: Table) -> str:
    """`sql` (a CREATE TABLE) with the REFERENCES clause after each linking column's type."""
    for column in table.columns:
        if column.references is None:
            continue
        definition = re.compile(
            rf"([(,]\s*{column.name} (?:TEXT|INTEGER)(?: NOT NULL)?)(?=\s*[,)])"
        )
        sql = definition.sub(rf"\g<1>{clause(column)}", sql, count=1)
    return sql


def declare(conn: sqlite3.Connection) -> list[str]:
    """Schema 16: the ledger's tables declare their links, and its search indexes name their
    table as Datasette looks for it (`content="messages"`, not `'messages'`: the same to FTS5);
    returns the tables that changed."""
    changed: list[tuple[str, str]] = []
    for name, sql in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%fts5%'"
    ).fetchall():
        new = _QUOTED_CONTENT.sub(r'content="\g<1>"', sql)
        if new != sql:
            changed.append((name, new))
    for table in ALL_TABLES:
        row = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table.name,)
        ).fetchone()
        if row is None:
            continue
        new = _declared(row[0], table)
        if new != row[0]:
            changed.append((table.name, new))
    if changed:
        (version,) = conn.execute("PRAGMA schema_version").fetchone()
        conn.execute("PRAGMA writable_schema = ON")
        try:
            conn.executemany(
                "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?",
                [(sql, name) for name, sql in changed],
            )
            conn.execute(f"PRAGMA schema_version = {version + 1}")
        finally:
            conn.execute("PRAGMA writable_schema = OFF")
    return [name for name, _ in changed]
