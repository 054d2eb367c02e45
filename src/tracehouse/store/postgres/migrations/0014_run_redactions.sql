-- What a run redacted, by kind: the producer's own count and what a gateway redacted of it.
ALTER TABLE import_runs ADD COLUMN IF NOT EXISTS redactions json;
