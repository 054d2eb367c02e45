-- A reject resolves when its location reads cleanly later; found by unit as a unit is read.
ALTER TABLE rejects ADD COLUMN IF NOT EXISTS resolved_at text;
CREATE INDEX IF NOT EXISTS idx_rejects_unit ON rejects (unit_key) WHERE resolved_at IS NULL;
