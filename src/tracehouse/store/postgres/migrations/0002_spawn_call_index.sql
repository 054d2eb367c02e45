-- A child that names its spawning call (a Codex review) links that call back to itself: the
-- store looks children up by the call they name, from the parent's side too.
CREATE INDEX IF NOT EXISTS idx_sessions_spawn_call ON sessions (spawn_tool_call_id);
