-- A session's linear histories, rewritten by the writer from its turns (a ledger written before
-- gets them as its sessions next change; `sessions show` works them out meanwhile).
CREATE TABLE IF NOT EXISTS threads (
    thread_id text NOT NULL PRIMARY KEY,
    session_id text NOT NULL,
    seq bigint,
    parent_thread_id text,
    fork_turn_id text,
    first_turn_id text,
    last_turn_id text,
    turn_count bigint,
    is_active boolean
);
CREATE INDEX IF NOT EXISTS idx_threads_session ON threads (session_id, seq);
