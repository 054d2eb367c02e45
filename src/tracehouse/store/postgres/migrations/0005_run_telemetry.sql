-- Why a run's retries waited, and the median tail lag beside the largest (`tracehouse runs`).
ALTER TABLE import_runs ADD COLUMN IF NOT EXISTS retry_reasons json;
ALTER TABLE import_runs ADD COLUMN IF NOT EXISTS tail_lag_p50_ms bigint;
