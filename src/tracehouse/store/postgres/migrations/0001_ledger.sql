-- The ledger (DESIGN §3) on PostgreSQL: the tables of model/tables.py as they stood when this
-- migration was written. Later migrations only add columns, tables and indexes.
--
-- Types follow the SQLite ledger so that `store copy` round-trips every value unchanged:
-- timestamps stay ISO-8601 text, JSON columns are `json` (the text exactly as written, still
-- queryable with -> and ->>), integers are bigint, flags boolean.

CREATE TABLE sessions (
    session_id          text NOT NULL,
    source_provider     text NOT NULL,
    source_session_id   text NOT NULL,
    fingerprint         text,
    label               text,
    title               text,
    created_at          text,
    updated_at          text,
    model               text,
    llm_provider        text,
    workspace_path      text,
    project             text,
    git_branch          text,
    git_commit          text,
    git_remote          text,
    tool_version        text,
    entrypoint          text,
    is_subagent         boolean,
    parent_session_id   text,
    parent_message_id   text,
    spawn_tool_call_id  text,
    task_description    text,
    task_status         text,
    input_tokens        bigint,
    output_tokens       bigint,
    cached_input_tokens bigint,
    cache_write_tokens  bigint,
    reasoning_tokens    bigint,
    total_tokens        bigint,
    turn_count          bigint,
    message_count       bigint,
    tool_call_count     bigint,
    metadata            json,
    source_path         text,
    host                text,
    importer_version    text,
    first_imported_at   text,
    last_imported_at    text,
    source_missing_at   text,
    PRIMARY KEY (session_id)
);

CREATE TABLE turns (
    turn_id             text NOT NULL,
    session_id          text NOT NULL,
    source_turn_id      text,
    parent_turn_id      text,
    seq                 bigint,
    started_at          text,
    completed_at        text,
    model               text,
    llm_provider        text,
    input_tokens        bigint,
    output_tokens       bigint,
    cached_input_tokens bigint,
    cache_write_tokens  bigint,
    reasoning_tokens    bigint,
    total_tokens        bigint,
    status              text,
    response_message_id text,
    query_message_ids   json,
    metadata            json,
    fingerprint         text,
    PRIMARY KEY (turn_id)
);

CREATE TABLE messages (
    message_id        text NOT NULL,
    session_id        text NOT NULL,
    turn_id           text,
    source_message_id text,
    parent_message_id text,
    seq               bigint,
    role              text NOT NULL,
    message_type      text NOT NULL,
    content           text,
    thinking          text,
    created_at        text,
    model             text,
    meta              json,
    metadata          json,
    source_ref        text,
    fingerprint       text,
    -- Full-text search over what was said, kept by the server ('simple': no stemming, so
    -- identifiers and paths match as written). The cut keeps a huge tool output under
    -- tsvector's 1 MB limit.
    content_tsv       tsvector GENERATED ALWAYS AS
                      (to_tsvector('simple', left(coalesce(content, ''), 200000))) STORED,
    PRIMARY KEY (message_id)
);

CREATE TABLE tool_calls (
    tool_call_id        text NOT NULL,
    session_id          text NOT NULL,
    turn_id             text,
    message_id          text,
    source_tool_call_id text,
    seq                 bigint,
    tool_name           text NOT NULL,
    params              json,
    result              text,
    status              text,
    error               text,
    spawned_session_id  text,
    started_at          text,
    completed_at        text,
    fingerprint         text,
    PRIMARY KEY (tool_call_id)
);

CREATE TABLE message_sources (
    message_id      text NOT NULL,
    session_id      text NOT NULL,
    source_id       text NOT NULL,
    source_type     text NOT NULL,
    title           text,
    uri             text,
    content_preview text,
    chunk_number    bigint,
    metadata        json,
    fingerprint     text,
    PRIMARY KEY (message_id, source_id)
);

CREATE TABLE watermarks (
    source_provider text NOT NULL,
    unit_key        text NOT NULL,
    cursor          json,
    updated_at      text,
    run_id          text,
    state           json,
    PRIMARY KEY (source_provider, unit_key)
);

CREATE TABLE import_runs (
    run_id           text NOT NULL,
    mode             text,
    started_at       text,
    finished_at      text,
    imported         bigint,
    upserted         bigint,
    skipped          bigint,
    failed           bigint,
    rejects          bigint,
    bytes_read       bigint,
    rows_written     bigint,
    retries          bigint,
    dedupe_hits      bigint,
    tail_lag_ms      bigint,
    error            text,
    host             text,
    importer_version text,
    PRIMARY KEY (run_id)
);

CREATE TABLE import_requests (
    idempotency_key text NOT NULL,
    request_hash    text NOT NULL,
    response        json,
    created_at      text,
    PRIMARY KEY (idempotency_key)
);

CREATE TABLE rejects (
    reject_id       text NOT NULL,
    run_id          text,
    source_provider text,
    unit_key        text,
    location        text,
    reason          text,
    raw_excerpt     text,
    created_at      text,
    PRIMARY KEY (reject_id)
);

CREATE INDEX idx_sessions_provider ON sessions (source_provider, source_session_id);
CREATE INDEX idx_sessions_label ON sessions (label);
CREATE INDEX idx_sessions_parent ON sessions (parent_session_id);
CREATE INDEX idx_sessions_source_path ON sessions (source_path);
CREATE INDEX idx_turns_session ON turns (session_id, seq);
CREATE INDEX idx_messages_session ON messages (session_id, seq);
CREATE INDEX idx_messages_fts ON messages USING gin (content_tsv);
CREATE INDEX idx_tool_calls_session ON tool_calls (session_id, seq);
CREATE INDEX idx_tool_calls_spawned ON tool_calls (spawned_session_id);
CREATE INDEX idx_sources_session ON message_sources (session_id);
CREATE INDEX idx_rejects_run ON rejects (run_id);
