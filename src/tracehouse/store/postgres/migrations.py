"""Numbered SQL migrations for the PostgreSQL store, applied when a store is opened.

`migrations/NNNN_name.sql` files run in order, each in its own transaction with its record in
`tracehouse_migrations`; a migration that must compute in Python (rows whose search words the
writer prepares) has a step in `PYTHON_STEPS`, run after its SQL in the same transaction.
Every machine of a team opens the ledger at once after an upgrade, so
the whole check-and-apply runs under one advisory lock: one process migrates, the others wait
and then find nothing to do. A ledger that has applied a migration this code does not know was
written by a newer tracehouse and is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from tracehouse.errors import StoreError

if TYPE_CHECKING:
    import psycopg

RECORD_TABLE = "tracehouse_migrations"
# pg_advisory_lock key: "tracehouse migrate" folded to a bigint, shared by every version.
_LOCK_KEY = 0x7472_6163_6568_6F75


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def label(self) -> str:
        return f"{self.version:04d}_{self.name}"


def _segment_scripts(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    from tracehouse.search.postgres_words import segment_scripts

    segment_scripts(conn)


def _unrecorded_tokens(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    from tracehouse.store.unrecorded import null_unrecorded

    def execute_many(sql: str, rows: list[tuple[Any, ...]]) -> None:
        with conn.cursor() as cur:
            cur.executemany(sql, rows)

    null_unrecorded(
        lambda sql: conn.execute(sql).fetchall(),
        execute_many,
        conn.execute,
        "%s",
        "%s::json",
    )


def _token_convention(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    from tracehouse.store.token_convention import to_convention

    def execute_many(sql: str, rows: list[tuple[Any, ...]]) -> None:
        with conn.cursor() as cur:
            cur.executemany(sql, rows)

    to_convention(lambda sql, args: conn.execute(sql, args).fetchall(), execute_many, "%s")


def _prompt_titles(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    from tracehouse.store.prompt_titles import add_titles

    def execute_many(sql: str, rows: list[tuple[Any, ...]]) -> None:
        with conn.cursor() as cur:
            cur.executemany(sql, rows)

    add_titles(lambda sql, args: conn.execute(sql, args).fetchall(), execute_many, "%s")


def _failed_call_results(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    from tracehouse.search.postgres_words import vectors_again
    from tracehouse.store.failed_calls import fill_results

    def execute_many(sql: str, rows: list[tuple[Any, ...]]) -> None:
        with conn.cursor() as cur:
            cur.executemany(sql, rows)

    keys = fill_results(lambda sql: conn.execute(sql).fetchall(), execute_many, "%s")
    if keys:
        vectors_again(conn, "tool_calls", "tool_call_id = ANY(%s)", [keys])


PYTHON_STEPS: dict[int, Callable[[psycopg.Connection[tuple[Any, ...]]], None]] = {
    15: _segment_scripts,
    16: _unrecorded_tokens,
    18: _token_convention,
    19: _prompt_titles,
    20: _failed_call_results,
}


def known_migrations() -> list[Migration]:
    folder = resources.files("tracehouse.store.postgres") / "migrations"
    found = []
    for entry in folder.iterdir():
        stem, _, ext = entry.name.partition(".")
        if ext != "sql":
            continue
        number, _, name = stem.partition("_")
        found.append(Migration(int(number), name, entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise AssertionError(f"migration numbers must run 1..n: {[m.version for m in found]}")
    return found


def applied(conn: psycopg.Connection[tuple[Any, ...]]) -> list[int]:
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (RECORD_TABLE,)).fetchone()
    if not exists or not exists[0]:
        return []
    return [row[0] for row in conn.execute(f"SELECT version FROM {RECORD_TABLE} ORDER BY 1")]


def pending(conn: psycopg.Connection[tuple[Any, ...]], where: str) -> list[Migration]:
    """The migrations this ledger lacks, in order; a ledger written by a newer schema is refused."""
    steps = known_migrations()
    done = applied(conn)
    if any(v > len(steps) for v in done):
        raise StoreError(
            f"{where}: this ledger was written by a newer tracehouse (schema version"
            f" {max(done)}, this one knows {len(steps)}); upgrade tracehouse to use it"
        )
    return [m for m in steps if m.version not in done]


def upgrade(conn: psycopg.Connection[tuple[Any, ...]], where: str) -> int:
    """Apply pending migrations; refuse a ledger written by a newer schema. Returns the version."""
    if not pending(conn, where):
        return len(known_migrations())  # the common case: no lock, one query
    conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        for step in pending(conn, where):  # again, now that no other process is migrating
            with conn.transaction():
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {RECORD_TABLE} (version integer PRIMARY KEY,"
                    " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
                )
                conn.execute(step.sql.encode())
                if step.version in PYTHON_STEPS:
                    PYTHON_STEPS[step.version](conn)
                conn.execute(
                    f"INSERT INTO {RECORD_TABLE} (version, name) VALUES (%s, %s)",
                    (step.version, step.name),
                )
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return len(applied(conn))
