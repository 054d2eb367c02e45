-- The reports of a recent window (the status line's today and its block, `usage --since`)
-- read the turns that began in it, not every turn (`reports/usage.turn_sql`).
CREATE INDEX IF NOT EXISTS idx_turns_started ON turns (started_at);
