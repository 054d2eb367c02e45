-- The request's source on its run, the producer's read time on the session (the item's
-- importedAtMs), a tool call's metadata (its exit code), a cited source's time.
ALTER TABLE import_runs ADD COLUMN IF NOT EXISTS source text;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS source_read_at text;
ALTER TABLE tool_calls ADD COLUMN IF NOT EXISTS metadata json;
ALTER TABLE message_sources ADD COLUMN IF NOT EXISTS created_at text;
