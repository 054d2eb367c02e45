-- The `sessions.import` form names links by source id, and a parent need not be in the ledger
-- for its id to be looked up: links keep their source-id spelling beside the id. Messages gain
-- `contextJson`'s column and calls `toolNumber`'s.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS parent_source_session_id text;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS parent_source_message_id text;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS spawn_source_tool_call_id text;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS context json;
ALTER TABLE tool_calls ADD COLUMN IF NOT EXISTS tool_number bigint;
ALTER TABLE tool_calls ADD COLUMN IF NOT EXISTS spawned_source_session_id text;

-- The links stored before, spelled by the source ids of the rows they point at.
UPDATE sessions SET parent_source_session_id = p.source_session_id
FROM sessions AS p WHERE p.session_id = sessions.parent_session_id
  AND sessions.parent_source_session_id IS NULL;
UPDATE sessions SET parent_source_message_id = m.source_message_id
FROM messages AS m WHERE m.message_id = sessions.parent_message_id
  AND sessions.parent_source_message_id IS NULL;
UPDATE sessions SET spawn_source_tool_call_id = tc.source_tool_call_id
FROM tool_calls AS tc WHERE tc.tool_call_id = sessions.spawn_tool_call_id
  AND sessions.spawn_source_tool_call_id IS NULL;
UPDATE tool_calls SET spawned_source_session_id = s.source_session_id
FROM sessions AS s WHERE s.session_id = tool_calls.spawned_session_id
  AND tool_calls.spawned_source_session_id IS NULL;
