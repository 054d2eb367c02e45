-- The full-text columns of 0003 stop being generated: the writer prepares their words
-- (ASCII punctuation made spaces, `search/postgres_words.py`) and the row's own INSERT
-- computes `to_tsvector('simple', words)`. The server's `regexp_replace` was a fifth of its
-- CPU in a backfill. DROP EXPRESSION keeps every stored tsvector and rewrites no row.
ALTER TABLE messages ALTER COLUMN content_tsv DROP EXPRESSION;
ALTER TABLE messages ALTER COLUMN thinking_tsv DROP EXPRESSION;
ALTER TABLE tool_calls ALTER COLUMN search_tsv DROP EXPRESSION;
ALTER TABLE sessions ALTER COLUMN search_tsv DROP EXPRESSION;
-- A writer of an older release still running (a `sync live` started before the upgrade) would
-- leave them empty, and its rows could never be found: it is refused instead, and its items
-- are imported again by the new release. Every stored row has one (0003 computed them all).
ALTER TABLE messages ALTER COLUMN content_tsv SET NOT NULL,
                     ALTER COLUMN thinking_tsv SET NOT NULL;
ALTER TABLE tool_calls ALTER COLUMN search_tsv SET NOT NULL;
ALTER TABLE sessions ALTER COLUMN search_tsv SET NOT NULL;
-- Large values compress with lz4 where the server has it (PostgreSQL ≥ 14 built with lz4):
-- pglz took a tenth of the server's CPU in a backfill. Only values written from now on are
-- compressed so; the server reads either.
DO $$
DECLARE
    col record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_settings
                   WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
        RETURN;
    END IF;
    FOR col IN
        SELECT a.attrelid::regclass AS tab, a.attname AS name
        FROM pg_attribute a
        WHERE a.attrelid IN ('messages'::regclass, 'tool_calls'::regclass,
                             'sessions'::regclass, 'watermarks'::regclass)
          AND a.attnum > 0 AND NOT a.attisdropped
          AND a.atttypid IN ('text'::regtype, 'json'::regtype, 'tsvector'::regtype)
    LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET COMPRESSION lz4', col.tab, col.name);
    END LOOP;
END
$$;
