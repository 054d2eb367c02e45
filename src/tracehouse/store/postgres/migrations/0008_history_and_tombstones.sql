-- One row per import that changed a session (`sessions show --history`), and the sessions
-- deleted by hand, kept out of later syncs until restored.
CREATE TABLE IF NOT EXISTS session_history (
    history_id text NOT NULL PRIMARY KEY,
    session_id text NOT NULL,
    run_id text,
    status text,
    fingerprint_before text,
    fingerprint_after text,
    rows_written bigint,
    recorded_at text
);
CREATE INDEX IF NOT EXISTS idx_session_history_session ON session_history (session_id);
CREATE TABLE IF NOT EXISTS session_tombstones (
    session_id text NOT NULL PRIMARY KEY,
    source_provider text,
    source_session_id text,
    label text,
    source_path text,
    deleted_at text
);
