-- Full-text search (`tracehouse search`), kept by the server in the row's own transaction.
-- Text is split into words at every character that is not a letter or a digit, as SQLite's
-- unicode61 tokenizer does, so a path, an identifier or a flag is the phrase of its words on
-- both backends ('simple': no stemming). The cut keeps a huge tool output under tsvector's
-- 1 MB limit. A generated column is computed for every existing row by ALTER TABLE itself.
ALTER TABLE messages DROP COLUMN content_tsv;
-- A tool result message holds the output its tool call holds: indexed once, on the call.
ALTER TABLE messages ADD COLUMN content_tsv tsvector GENERATED ALWAYS AS
    (to_tsvector('simple', regexp_replace(left(CASE WHEN message_type = 'tool_result' THEN ''
                                                    ELSE coalesce(content, '') END, 200000),
                                          '[^[:alnum:]]+', ' ', 'g'))) STORED;
ALTER TABLE messages ADD COLUMN thinking_tsv tsvector GENERATED ALWAYS AS
    (to_tsvector('simple', regexp_replace(left(coalesce(thinking, ''), 200000),
                                          '[^[:alnum:]]+', ' ', 'g'))) STORED;
ALTER TABLE tool_calls ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS
    (to_tsvector('simple', regexp_replace(left(
        coalesce(tool_name, '') || ' ' || coalesce(params::text, '') || ' '
        || coalesce(result, '') || ' ' || coalesce(error, ''), 200000),
        '[^[:alnum:]]+', ' ', 'g'))) STORED;
ALTER TABLE sessions ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS
    (to_tsvector('simple', regexp_replace(
        coalesce(title, '') || ' ' || coalesce(task_description, ''),
        '[^[:alnum:]]+', ' ', 'g'))) STORED;
CREATE INDEX idx_messages_fts ON messages USING gin (content_tsv);
CREATE INDEX idx_messages_thinking_fts ON messages USING gin (thinking_tsv);
CREATE INDEX idx_tool_calls_fts ON tool_calls USING gin (search_tsv);
CREATE INDEX idx_sessions_fts ON sessions USING gin (search_tsv);
