"""Numbered schema migrations for the SQLite store, applied on open.

The first migration creates every table from the declarations in `model/tables.py` as they stood
when it was written; later migrations only append columns, tables and indexes. A ledger that has
applied a migration this code does not know was written by a newer tracehouse and is refused.

sqlite-utils' `Migrations` applies the steps and records each in its table. Opening a ledger
with nothing pending reads that table with one query and never imports the library (with click,
pluggy and dateutil it is 5 MB and 0.1 s of a start on 2 cores): a sync with nothing to do,
every command on an up-to-date ledger, loads none of it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tracehouse.errors import StoreError
from tracehouse.model.columns import Kind, Table
from tracehouse.model.tables import (
    ALL_TABLES,
    API_TOKENS,
    EXPORT_MARKS,
    SESSION_ALIASES,
    SESSION_HISTORY,
    SESSION_TOMBSTONES,
    THREADS,
)
from tracehouse.store.sqlite.foreign_keys import clause, declare

if TYPE_CHECKING:
    from sqlite_utils import Database

SET_NAME = "tracehouse"
RECORD_TABLE = "_sqlite_migrations"  # sqlite-utils' record of applied migrations

_SQL_TYPE = {Kind.TEXT: "TEXT", Kind.INT: "INTEGER", Kind.BOOL: "INTEGER", Kind.JSON: "TEXT"}


def create_table_sql(table: Table) -> str:
    columns = [
        f"{c.name} {_SQL_TYPE[c.kind]}{' NOT NULL' if c.required else ''}{clause(c)}"
        for c in table.columns
    ]
    pk = ", ".join(table.primary_key)
    return f"CREATE TABLE IF NOT EXISTS {table.name} ({', '.join(columns)}, PRIMARY KEY ({pk}))"


def m001_ledger(conn: sqlite3.Connection) -> None:
    for table in ALL_TABLES:
        conn.execute(create_table_sql(table))
    for sql in (
        "CREATE INDEX idx_sessions_provider ON sessions (source_provider, source_session_id)",
        "CREATE INDEX idx_sessions_label ON sessions (label)",
        "CREATE INDEX idx_sessions_parent ON sessions (parent_session_id)",
        "CREATE INDEX idx_sessions_source_path ON sessions (source_path)",
        "CREATE INDEX idx_turns_session ON turns (session_id, seq)",
        "CREATE INDEX idx_messages_session ON messages (session_id, seq)",
        "CREATE INDEX idx_tool_calls_session ON tool_calls (session_id, seq)",
        "CREATE INDEX idx_tool_calls_spawned ON tool_calls (spawned_session_id)",
        "CREATE INDEX idx_sources_session ON message_sources (session_id)",
        "CREATE INDEX idx_rejects_run ON rejects (run_id)",
    ):
        conn.execute(sql)


def m002_spawn_call_index(conn: sqlite3.Connection) -> None:
    # A child that names its spawning call (a Codex review) links that call back to itself:
    # the store looks children up by the call they name, from the parent's side too.
    conn.execute("CREATE INDEX idx_sessions_spawn_call ON sessions (spawn_tool_call_id)")


def m003_search_index(conn: sqlite3.Connection) -> None:
    from tracehouse.search import sqlite_upgrades

    sqlite_upgrades.create(conn)


def m004_rejects_resolve(conn: sqlite3.Connection) -> None:
    # A reject resolves when its location reads cleanly later; found by unit as a unit is read.
    _add_column(conn, "rejects", "resolved_at TEXT")
    conn.execute("CREATE INDEX idx_rejects_unit ON rejects (unit_key) WHERE resolved_at IS NULL")


def m005_run_telemetry(conn: sqlite3.Connection) -> None:
    # Why a run's retries waited, and the median tail lag beside the largest (`tracehouse runs`).
    _add_column(conn, "import_runs", "retry_reasons TEXT")
    _add_column(conn, "import_runs", "tail_lag_p50_ms INTEGER")


def m006_search_index_without_triggers(conn: sqlite3.Connection) -> None:
    # The writer keeps the index: triggers made every row written cost a statement journal.
    from tracehouse.search import sqlite_upgrades

    sqlite_upgrades.drop_triggers(conn)


def m007_export_marks(conn: sqlite3.Connection) -> None:
    # Where each export went last, and when: `export --since-last` writes only what changed.
    conn.execute(create_table_sql(EXPORT_MARKS))


def m008_source_links(conn: sqlite3.Connection) -> None:
    # The `sessions.import` form names links by source id, and a parent need not be in the
    # ledger for its id to be looked up: links keep their source-id spelling beside the id.
    # Messages gain `contextJson`'s column and calls `toolNumber`'s.
    for table, column in (
        ("sessions", "parent_source_session_id TEXT"),
        ("sessions", "parent_source_message_id TEXT"),
        ("sessions", "spawn_source_tool_call_id TEXT"),
        ("messages", "context TEXT"),
        ("tool_calls", "tool_number INTEGER"),
        ("tool_calls", "spawned_source_session_id TEXT"),
    ):
        _add_column(conn, table, column)
    for statement in SOURCE_LINKS_BACKFILL:
        conn.execute(statement)


def m009_history_and_tombstones(conn: sqlite3.Connection) -> None:
    # One row per import that changed a session (`sessions show --history`), and the sessions
    # deleted by hand, kept out of later syncs until restored.
    conn.execute(create_table_sql(SESSION_HISTORY))
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_session_history_session ON session_history (session_id)"
    )
    conn.execute(create_table_sql(SESSION_TOMBSTONES))


def m010_session_aliases(conn: sqlite3.Connection) -> None:
    # Labels are unique: a lengthened label's old form keeps resolving (`sessions show`).
    conn.execute(create_table_sql(SESSION_ALIASES))
    conn.execute("CREATE INDEX IF NOT EXISTS idx_session_aliases_session ON session_aliases"
                 " (session_id)")  # fmt: skip
    _add_column(conn, "sessions", "label_base TEXT")
    conn.execute("UPDATE sessions SET label_base = label WHERE label_base IS NULL")
    conn.execute("CREATE INDEX IF NOT EXISTS idx_sessions_label_base ON sessions (label_base)")
    # Labels that collided before they were kept unique never resolved to one session: each
    # member of such a group gets its label and a piece of a hash of its id (as PostgreSQL's
    # migration does, with md5).
    duplicated = conn.execute(
        "SELECT session_id, label FROM sessions WHERE label IN"
        " (SELECT label FROM sessions GROUP BY label HAVING count(*) > 1)"
    ).fetchall()
    for session_id, label in duplicated:
        piece = hashlib.md5(session_id.encode()).hexdigest()[:6]
        conn.execute("UPDATE sessions SET label = ? WHERE session_id = ?",
                     [f"{label}-{piece}", session_id])  # fmt: skip


def m011_threads(conn: sqlite3.Connection) -> None:
    # A session's linear histories, rewritten by the writer from its turns (a ledger written
    # before gets them as its sessions next change; `sessions show` works them out meanwhile).
    conn.execute(create_table_sql(THREADS))
    conn.execute("CREATE INDEX IF NOT EXISTS idx_threads_session ON threads (session_id, seq)")


def m012_api_tokens(conn: sqlite3.Connection) -> None:
    # The gateway's tokens live in the ledger, so gateways in front of one store share them.
    conn.execute(create_table_sql(API_TOKENS))
    conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS idx_api_tokens_hash ON api_tokens (token_hash)")


def m013_token_machines(conn: sqlite3.Connection) -> None:
    # A push token is bound to the machine it was issued for (a token named after a machine
    # name keeps that name; any other must be issued again with --machine).
    _add_column(conn, "api_tokens", "machine TEXT")
    conn.execute(TOKEN_MACHINES_BACKFILL)


def m014_run_redactions(conn: sqlite3.Connection) -> None:
    # What a run redacted, by kind: the producer's own count and what a gateway redacted of it.
    _add_column(conn, "import_runs", "redactions TEXT")


def m015_search_unspaced_scripts(conn: sqlite3.Connection) -> None:
    # Chinese, Japanese, Thai, … are indexed a character a word (`search/scripts.py`).
    from tracehouse.search import sqlite_upgrades

    sqlite_upgrades.segment_scripts(conn)


def m016_foreign_keys(conn: sqlite3.Connection) -> None:
    # The links between tables declared, for Datasette and other tools that follow them.
    declare(conn)


def m017_unrecorded_tokens(conn: sqlite3.Connection) -> None:
    # Counts and times no agent recorded become NULL, not 0 or a file's (`store/unrecorded.py`).
    from tracehouse.store.unrecorded import null_unrecorded

    null_unrecorded(
        lambda sql: conn.execute(sql).fetchall(),
        conn.executemany,
        conn.execute,
        "?",
        "?",
    )


def m018_seed_details(conn: sqlite3.Connection) -> None:
    # The request's source on its run, the producer's read time on the session, a tool call's
    # metadata (its exit code), a cited source's time.
    _add_column(conn, "import_runs", "source TEXT")
    _add_column(conn, "sessions", "source_read_at TEXT")
    _add_column(conn, "tool_calls", "metadata TEXT")
    _add_column(conn, "message_sources", "created_at TEXT")


def m019_token_convention(conn: sqlite3.Connection) -> None:
    # Every provider's tokens in the schema's one convention (`store/token_convention.py`).
    from tracehouse.store.token_convention import to_convention

    to_convention(lambda sql, args: conn.execute(sql, args).fetchall(), conn.executemany, "?")


def m020_prompt_titles(conn: sqlite3.Connection) -> None:
    # A title for every session that has a prompt (`store/prompt_titles.py`).
    from tracehouse.store.prompt_titles import add_titles

    add_titles(lambda sql, args: conn.execute(sql, args).fetchall(), conn.executemany, "?")


def m021_search_merges_by_steps(conn: sqlite3.Connection) -> None:
    # The search indexes merge their segments in steps as writes come, not a whole level in
    # the write that adds its sixteenth segment (`sqlite_index.TUNING`).
    from tracehouse.search import sqlite_index

    for index in sqlite_index.INDEXES:
        for sql in sqlite_index.tuning(index):
            conn.execute(sql)


def m022_failed_call_results(conn: sqlite3.Connection) -> None:
    # A failed call's output in `result` too (`store/failed_calls.py`), indexed again.
    from tracehouse.search import sqlite_index
    from tracehouse.store.failed_calls import WHERE, fill_results

    try:  # the index's SQL function, on whatever connection migrates (a store's has it)
        conn.execute(f"SELECT {sqlite_index.SEGMENTED}('')")
    except sqlite3.OperationalError:
        sqlite_index.register(conn)
    sqlite_index.before_update(conn, "tool_calls", WHERE)
    fill_results(lambda sql: conn.execute(sql).fetchall(), conn.executemany, "?")
    sqlite_index.flush(conn)


def m023_turns_by_time(conn: sqlite3.Connection) -> None:
    # The reports of a recent window (the status line's today and its block, `usage --since`)
    # read the turns that began in it, not every turn (`reports/usage.turn_sql`).
    conn.execute("CREATE INDEX IF NOT EXISTS idx_turns_started ON turns (started_at)")


def m024_embeddings(conn: sqlite3.Connection) -> None:
    # Search by meaning: the vectors of the ledger's passages, made by the sync after its rows
    # are committed (`search/sqlite_vectors.py`); empty until a model embeds them.
    from tracehouse.search import sqlite_vectors

    sqlite_vectors.create(conn)


def m025_usage_slots(conn: sqlite3.Connection) -> None:
    # The usage reports read the turns' sums by quarter hour that the writer keeps, not every
    # turn (`store/sqlite/usage_slots.py`); summed here from the turns stored so far.
    from tracehouse.store.sqlite import usage_slots

    usage_slots.rebuild(conn)


TOKEN_MACHINES_BACKFILL = (
    "UPDATE api_tokens SET machine = name WHERE scope = 'push' AND machine IS NULL"
    " AND name NOT GLOB '*[^A-Za-z0-9._-]*' AND length(name) <= 64"
)


# The links stored before m008, spelled by the source ids of the rows they point at (a link to a
# row this ledger lacks stays without one; the next sync of its session fills it).
SOURCE_LINKS_BACKFILL = (
    "UPDATE sessions SET parent_source_session_id = (SELECT p.source_session_id FROM sessions"
    " AS p WHERE p.session_id = sessions.parent_session_id)"
    " WHERE parent_session_id IS NOT NULL AND parent_source_session_id IS NULL",
    "UPDATE sessions SET parent_source_message_id = (SELECT m.source_message_id FROM messages"
    " AS m WHERE m.message_id = sessions.parent_message_id)"
    " WHERE parent_message_id IS NOT NULL AND parent_source_message_id IS NULL",
    "UPDATE sessions SET spawn_source_tool_call_id = (SELECT tc.source_tool_call_id FROM"
    " tool_calls AS tc WHERE tc.tool_call_id = sessions.spawn_tool_call_id)"
    " WHERE spawn_tool_call_id IS NOT NULL AND spawn_source_tool_call_id IS NULL",
    "UPDATE tool_calls SET spawned_source_session_id = (SELECT s.source_session_id FROM sessions"
    " AS s WHERE s.session_id = tool_calls.spawned_session_id)"
    " WHERE spawned_session_id IS NOT NULL AND spawned_source_session_id IS NULL",
)


def _add_column(conn: sqlite3.Connection, table: str, column: str) -> None:
    """A column a later migration adds, unless m001 already made it (m001 creates every table
    as `model/tables.py` declares it today)."""
    if column.split()[0] not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column}")


# In order; a name is never reused or renumbered.
STEPS: list[tuple[str, Callable[[sqlite3.Connection], None]]] = [
    ("m001_ledger", m001_ledger),
    ("m002_spawn_call_index", m002_spawn_call_index),
    ("m003_search_index", m003_search_index),
    ("m004_rejects_resolve", m004_rejects_resolve),
    ("m005_run_telemetry", m005_run_telemetry),
    ("m006_search_index_without_triggers", m006_search_index_without_triggers),
    ("m007_export_marks", m007_export_marks),
    ("m008_source_links", m008_source_links),
    ("m009_history_and_tombstones", m009_history_and_tombstones),
    ("m010_session_aliases", m010_session_aliases),
    ("m011_threads", m011_threads),
    ("m012_api_tokens", m012_api_tokens),
    ("m013_token_machines", m013_token_machines),
    ("m014_run_redactions", m014_run_redactions),
    ("m015_search_unspaced_scripts", m015_search_unspaced_scripts),
    ("m016_foreign_keys", m016_foreign_keys),
    ("m017_unrecorded_tokens", m017_unrecorded_tokens),
    ("m018_seed_details", m018_seed_details),
    ("m019_token_convention", m019_token_convention),
    ("m020_prompt_titles", m020_prompt_titles),
    ("m021_search_merges_by_steps", m021_search_merges_by_steps),
    ("m022_failed_call_results", m022_failed_call_results),
    ("m023_turns_by_time", m023_turns_by_time),
    ("m024_embeddings", m024_embeddings),
    ("m025_usage_slots", m025_usage_slots),
]


def known_migrations() -> list[str]:
    return [name for name, _ in STEPS]


def applied(conn: sqlite3.Connection) -> list[str]:
    try:
        rows = conn.execute(
            f"SELECT name FROM {RECORD_TABLE} WHERE migration_set = ? ORDER BY rowid", (SET_NAME,)
        ).fetchall()
    except sqlite3.OperationalError:  # no migration has ever been applied
        return []
    return [row[0] for row in rows]


def pending(conn: sqlite3.Connection, path: Any) -> list[str]:
    """The migrations this ledger lacks, in order; a ledger written by a newer schema is refused."""
    done = applied(conn)
    unknown = [name for name in done if name not in known_migrations()]
    if unknown:
        raise StoreError(
            f"{path}: this ledger was written by a newer tracehouse (schema version {len(done)},"
            f" this one knows {len(known_migrations())}: unknown migration {unknown[0]});"
            " upgrade tracehouse to use it"
        )
    return [name for name in known_migrations() if name not in done]


def upgrade(conn: sqlite3.Connection, path: Any) -> int:
    """Apply pending migrations; refuse a ledger written by a newer schema. Returns the version."""
    if pending(conn, path):
        # Two first runs on a new ledger start at once: the write lock is taken before the
        # pending list is read again, so one applies the migrations and the other finds none
        # left. All of them commit together or not at all.
        conn.execute("BEGIN IMMEDIATE")
        try:
            if pending(conn, path):
                _apply(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return len(applied(conn))


def _apply(conn: sqlite3.Connection) -> None:
    """Run the pending steps in order, each recorded with it in a savepoint of the caller's
    transaction (sqlite-utils nests there), so all of them commit together or not at all."""
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations

    steps = Migrations(SET_NAME)
    for name, step in STEPS:
        steps(name=name)(_on_connection(step))
    # No plugins loaded, and the connection left as the store set it (no recursive triggers).
    steps.apply(Database(conn, recursive_triggers=False, execute_plugins=False))


def _on_connection(step: Callable[[sqlite3.Connection], None]) -> Callable[[Database], None]:
    def run(db: Database) -> None:
        step(db.conn)

    return run
