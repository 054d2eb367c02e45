-- Labels are unique: a lengthened label's old form keeps resolving (`sessions show`).
CREATE TABLE IF NOT EXISTS session_aliases (
    alias text NOT NULL PRIMARY KEY,
    session_id text NOT NULL,
    created_at text
);
CREATE INDEX IF NOT EXISTS idx_session_aliases_session ON session_aliases (session_id);
-- The label a session was stored with, before any growth: what a collision group shares.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS label_base text;
UPDATE sessions SET label_base = label WHERE label_base IS NULL;
CREATE INDEX IF NOT EXISTS idx_sessions_label_base ON sessions (label_base);

-- Labels that collided before they were kept unique never resolved to one session: each
-- member of such a group gets its label and a piece of a hash of its id.
UPDATE sessions SET label = label || '-' || substr(md5(session_id), 1, 6)
WHERE label IN (SELECT label FROM sessions GROUP BY label HAVING count(*) > 1);
