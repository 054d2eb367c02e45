"""The ledger's tables (DESIGN §3), declared once.

Every other representation is derived from these declarations: the polars schemas of the frames
that parsers build, the SQLite DDL and the columns a fingerprint covers (the import contract's
fields map onto them in `model/wire.py`). Columns are only ever appended, never reordered or
renamed, so an older ledger upgrades by `ALTER TABLE … ADD COLUMN`.
"""

from __future__ import annotations

from tracehouse.model.columns import Column, Kind, Table
from tracehouse.model.sources import SOURCES

INT, BOOL, JSON = Kind.INT, Kind.BOOL, Kind.JSON

ROLES = ("user", "assistant", "system", "tool")
MESSAGE_TYPES = ("user", "assistant", "system", "tool_result", "host")
TURN_STATUSES = ("completed", "aborted", "error")
TOOL_STATUSES = ("pending", "running", "completed", "failed")
PROVIDERS = tuple(SOURCES)  # every source's name, in `model/sources.py`'s order

_TOKENS = (
    Column("input_tokens", INT),
    Column("output_tokens", INT),
    Column("cached_input_tokens", INT),
    Column("cache_write_tokens", INT),
    Column("reasoning_tokens", INT),
    Column("total_tokens", INT),
)
TOKEN_COLUMNS = tuple(c.name for c in _TOKENS)  # a session's are its turns' sums

SESSIONS = Table(
    "sessions",
    (
        Column("session_id", required=True),
        Column("source_provider", required=True),
        Column("source_session_id", required=True),
        Column("fingerprint", content=False),
        # The store owns it once the session is stored: unique, lengthened when another
        # session's collides (`store/labels.py`), so it is not part of the content.
        Column("label", content=False),
        Column("title"),
        Column("created_at"),
        Column("updated_at"),
        Column("model"),
        Column("llm_provider"),
        Column("workspace_path"),
        Column("project"),
        Column("git_branch"),
        Column("git_commit"),
        Column("git_remote"),
        Column("tool_version"),
        Column("entrypoint"),
        Column("is_subagent", BOOL),
        # Lineage links may be filled in by the store from the parent's tool calls (DESIGN §3:
        # importing a child before its parent gives the same ledger), so they sit outside the
        # fingerprint of the child's own content.
        Column("parent_session_id", content=False, references="sessions.session_id"),
        Column("parent_message_id", content=False, references="messages.message_id"),
        Column("spawn_tool_call_id", content=False, references="tool_calls.tool_call_id"),
        Column("task_description"),
        Column("task_status"),
        *_TOKENS,
        Column("turn_count", INT),
        Column("message_count", INT),
        Column("tool_call_count", INT),
        Column("metadata", JSON),
        Column("source_path", content=False),
        Column("host", content=False),
        Column("importer_version", content=False),
        Column("first_imported_at", content=False),
        Column("last_imported_at", content=False),
        Column("source_missing_at", content=False),
        # The lineage links as the producer named them, by source id within the provider: what
        # the `sessions.import` form carries, kept because a parent may not be in this ledger
        # for its id to be looked up from.
        Column("parent_source_session_id", content=False),
        Column("parent_source_message_id", content=False),
        Column("spawn_source_tool_call_id", content=False),
        Column("label_base", content=False),  # the label it was stored with, before any growth
        # When its producer read it from the source (the item's `importedAtMs`), beside when
        # this ledger stored it (`first_imported_at`, `last_imported_at`).
        Column("source_read_at", content=False),
    ),
    ("session_id",),
)

TURNS = Table(
    "turns",
    (
        Column("turn_id", required=True),
        Column("session_id", required=True, references="sessions.session_id"),
        Column("source_turn_id"),
        Column("parent_turn_id", references="turns.turn_id"),
        Column("seq", INT),
        Column("started_at"),
        Column("completed_at"),
        Column("model"),
        Column("llm_provider"),
        *_TOKENS,
        Column("status", choices=TURN_STATUSES),
        Column("response_message_id", references="messages.message_id"),
        Column("query_message_ids", JSON),
        Column("metadata", JSON),
        Column("fingerprint", content=False),
    ),
    ("turn_id",),
)

MESSAGES = Table(
    "messages",
    (
        Column("message_id", required=True),
        Column("session_id", required=True, references="sessions.session_id"),
        Column("turn_id", references="turns.turn_id"),
        Column("source_message_id"),
        Column("parent_message_id", references="messages.message_id"),
        Column("seq", INT),
        Column("role", required=True, choices=ROLES),
        Column("message_type", required=True, choices=MESSAGE_TYPES),
        Column("content"),
        Column("thinking"),
        Column("created_at"),
        Column("model"),
        Column("meta", JSON),
        Column("metadata", JSON),
        Column("source_ref", content=False),
        Column("fingerprint", content=False),
        Column("context", JSON, late=True),  # what the message was sent with (`contextJson`)
    ),
    ("message_id",),
)

TOOL_CALLS = Table(
    "tool_calls",
    (
        Column("tool_call_id", required=True),
        Column("session_id", required=True, references="sessions.session_id"),
        Column("turn_id", references="turns.turn_id"),
        Column("message_id", references="messages.message_id"),
        Column("source_tool_call_id"),
        Column("seq", INT),
        Column("tool_name", required=True),
        Column("params", JSON),
        Column("result"),
        Column("status", choices=TOOL_STATUSES),
        Column("error"),
        Column("spawned_session_id", references="sessions.session_id"),
        Column("started_at"),
        Column("completed_at"),
        Column("fingerprint", content=False),
        Column("tool_number", INT, late=True),  # the producer's own numbering (`toolNumber`)
        Column("spawned_source_session_id", content=False),  # as `parent_source_session_id`
        Column("metadata", JSON, late=True),  # what the source adds: {"exit_code": 1}
    ),
    ("tool_call_id",),
)

MESSAGE_SOURCES = Table(
    "message_sources",
    (
        Column("message_id", required=True, references="messages.message_id"),
        Column("session_id", required=True, references="sessions.session_id"),
        Column("source_id", required=True),
        Column("source_type", required=True),
        Column("title"),
        Column("uri"),
        Column("content_preview"),
        Column("chunk_number", INT),
        Column("metadata", JSON),
        Column("fingerprint", content=False),
        Column("created_at", late=True),  # when the message that cites it was written
    ),
    ("message_id", "source_id"),
)

WATERMARKS = Table(
    "watermarks",
    (
        Column("source_provider", required=True),
        Column("unit_key", required=True),
        Column("cursor", JSON),
        Column("updated_at"),
        Column("run_id", references="import_runs.run_id"),
        # The parser's resume state, apart from the cursor: planning reads every cursor, but a
        # state only for the units it is about to parse.
        Column("state", JSON),
    ),
    ("source_provider", "unit_key"),
)

IMPORT_RUNS = Table(
    "import_runs",
    (
        Column("run_id", required=True),
        Column("mode"),
        Column("started_at"),
        Column("finished_at"),
        Column("imported", INT),
        Column("upserted", INT),
        Column("skipped", INT),
        Column("failed", INT),
        Column("rejects", INT),
        Column("bytes_read", INT),
        Column("rows_written", INT),
        Column("retries", INT),
        Column("dedupe_hits", INT),
        Column("tail_lag_ms", INT),  # the largest of the run's committed units
        Column("error"),
        Column("host"),
        Column("importer_version"),
        Column("retry_reasons", JSON),  # {"database is locked": 3}: what the retries waited for
        Column("tail_lag_p50_ms", INT),  # the median, beside tail_lag_ms's largest
        Column("redactions", JSON),  # {"github-pat": 2}: the secrets replaced by markers
        Column("source"),  # who sent the batches: the request's `source` (`tracehouse`, …)
    ),
    ("run_id",),
)

IMPORT_REQUESTS = Table(
    "import_requests",
    (
        Column("idempotency_key", required=True),
        Column("request_hash", required=True),
        Column("response", JSON),
        Column("created_at"),
    ),
    ("idempotency_key",),
)

REJECTS = Table(
    "rejects",
    (
        Column("reject_id", required=True),
        Column("run_id", references="import_runs.run_id"),
        Column("source_provider"),
        Column("unit_key"),
        Column("location"),
        Column("reason"),
        Column("raw_excerpt"),
        Column("created_at"),
        # Set when the location later read cleanly (a fixed line, a completed one); a reject
        # raised again is unresolved again.
        Column("resolved_at"),
    ),
    ("reject_id",),
)

EXPORT_MARKS = Table(
    "export_marks",
    (
        Column("target", required=True),  # the export directory, as an absolute path
        Column("format", required=True),
        Column("exported_at"),  # when the last export there started: `--since-last` reads it
        Column("sessions", INT),  # how many sessions that export wrote
    ),
    ("target", "format"),
)

# The gateway's bearer tokens (`tracehouse serve tokens`): kept in the ledger so that any number of
# gateways in front of one store share them and hold no state of their own. Only a hash is kept.
API_TOKENS = Table(
    "api_tokens",
    (
        Column("name", required=True),
        Column("scope", required=True),  # push (send sessions.import) or read (list, show, search)
        Column("token_hash", required=True),  # sha256 of the token: it is 256 random bits
        Column("created_at"),
        Column("last_used_at"),
        # A push token writes as this machine only: its sessions, its cursors, its runs.
        Column("machine"),
    ),
    ("name",),
)

SESSION_HISTORY = Table(
    "session_history",
    (
        Column("history_id", required=True),  # the session, the run and the new fingerprint
        Column("session_id", required=True, references="sessions.session_id"),
        Column("run_id", references="import_runs.run_id"),
        Column("status", choices=("imported", "upserted")),
        Column("fingerprint_before"),
        Column("fingerprint_after"),
        Column("rows_written", INT),
        Column("recorded_at"),
    ),
    ("history_id",),
)

# A session's linear histories (`model/threads.py`), derived from its turns' parent chain and
# rewritten by the store whenever they change.
THREADS = Table(
    "threads",
    (
        Column("thread_id", required=True),  # a hash of the session and its first turn
        Column("session_id", required=True, references="sessions.session_id"),
        Column("seq", INT),
        Column("parent_thread_id", references="threads.thread_id"),
        Column("fork_turn_id", references="turns.turn_id"),
        Column("first_turn_id", references="turns.turn_id"),
        Column("last_turn_id", references="turns.turn_id"),
        Column("turn_count", INT),
        Column("is_active", BOOL),
    ),
    ("thread_id",),
)

# Every label a session was shown under before it had to be lengthened: it keeps resolving.
SESSION_ALIASES = Table(
    "session_aliases",
    (
        Column("alias", required=True),
        Column("session_id", required=True, references="sessions.session_id"),
        Column("created_at"),
    ),
    ("alias",),
)

# A deleted session, so that a later sync does not bring it back from a source that still
# has it, until it is restored.
SESSION_TOMBSTONES = Table(
    "session_tombstones",
    (
        Column("session_id", required=True),
        Column("source_provider"),
        Column("source_session_id"),
        Column("label"),
        Column("source_path"),
        Column("deleted_at"),
    ),
    ("session_id",),
)

# Content columns the store may fill in after a row was fingerprinted: a parent's spawning call
# learns its child when the child arrives (either order gives the same ledger), so its stored
# fingerprint is its source's, without the link.
STORE_FILLED = {"tool_calls": ("spawned_session_id", "spawned_source_session_id")}

# The tables an import item carries rows for, keyed by the item's JSON field name.
CONTENT_TABLES: dict[str, Table] = {
    "turns": TURNS,
    "messages": MESSAGES,
    "toolCalls": TOOL_CALLS,
    "sources": MESSAGE_SOURCES,
}

ALL_TABLES: tuple[Table, ...] = (
    SESSIONS,
    TURNS,
    MESSAGES,
    TOOL_CALLS,
    MESSAGE_SOURCES,
    WATERMARKS,
    IMPORT_RUNS,
    IMPORT_REQUESTS,
    REJECTS,
    EXPORT_MARKS,
    SESSION_HISTORY,
    SESSION_TOMBSTONES,
    SESSION_ALIASES,
    THREADS,
    API_TOKENS,
)
TABLES_BY_NAME: dict[str, Table] = {t.name: t for t in ALL_TABLES}
