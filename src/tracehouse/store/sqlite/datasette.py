"""Metadata for browsing a SQLite ledger in Datasette (`datasette ledger.db -m metadata.json`).

Datasette finds the links and the search indexes in the schema itself (schema 16): a plain
`datasette ledger.db` links a message to its session and turn and has a search box on sessions,
messages and tool calls. What only metadata can say is which tables are tracehouse's
bookkeeping (migration records, search marks, idempotency keys, token hashes) and which are the
search indexes, hidden here so the first page lists the conversation tables, and how each table
reads best. sqlite-utils reads which of them the ledger holds and which index searches each
table (named here, so the search box does not rest on Datasette's own guess).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Bookkeeping no one browses: hidden from the table list (still reachable by URL and SQL).
HIDDEN = (
    "_sqlite_migrations",
    "search_marks",
    "search_pending",
    "import_requests",
    "export_marks",
    "api_tokens",
    "watermarks",
)

# The search index holds a run of Chinese, Japanese or Thai a character a word (`search/
# scripts.py`), while Datasette's box quotes each term it is given as it is: a word written
# without spaces finds nothing there unless its characters are spaced apart.
UNSPACED = (
    " Chinese, Japanese or Thai in the search box: space the characters apart (聊 天 记 录 finds"
    ' rows holding all four); for the phrase, quote it and add &_searchmode=raw to the URL'
    ' ("聊 天 记 录").'
)

TABLES: dict[str, dict[str, Any]] = {
    "sessions": {
        "description": "One row per agent session; label is what the CLI shows (cc-…, cx-…)."
        + UNSPACED,
        "sort_desc": "updated_at",
        "label_column": "label",
        "facets": ["source_provider", "project"],
    },
    "turns": {"description": "A prompt and what answered it; tokens are counted here."},
    "messages": {
        "description": "Every prompt, answer, tool result and host notice, in session order."
        + UNSPACED,
        "facets": ["role", "message_type"],
    },
    "tool_calls": {
        "description": "Each tool call with its parameters, result and status." + UNSPACED,
        "facets": ["tool_name", "status"],
    },
    "message_sources": {"description": "Files, URLs and documents a message cited."},
    "import_runs": {
        "description": "Every sync: when, what it read and wrote.",
        "sort_desc": "started_at",
    },
    "rejects": {"description": "Records that could not be imported, with file and line."},
}


def metadata(ledger: Path) -> dict[str, Any]:
    """Datasette metadata for the ledger at `ledger` (Datasette names a database by its file's
    stem), read without writing to it."""
    import sqlite3

    from sqlite_utils import Database

    conn = sqlite3.connect(f"{ledger.resolve().as_uri()}?mode=ro", uri=True)
    try:
        db = Database(conn, recursive_triggers=False, execute_plugins=False)
        present = set(db.table_names())
        indexes = {name: db.table(name).detect_fts() for name in TABLES if name in present}
        searched = set(db.table_names(fts5=True))
    finally:
        conn.close()
    # Bookkeeping, and each search index: a table's search box reaches its index.
    tables: dict[str, dict[str, Any]] = {
        name: {"hidden": True} for name in sorted({*HIDDEN, *searched} & present)
    }
    for name, shown in TABLES.items():
        if name not in present:
            continue
        tables[name] = dict(shown)
        if indexes.get(name):
            tables[name].update(fts_table=indexes[name], fts_pk="rowid")
    return {
        "title": "tracehouse ledger",
        "description": "Every agent session tracehouse imported.",
        "databases": {ledger.stem: {"tables": tables}},
    }
