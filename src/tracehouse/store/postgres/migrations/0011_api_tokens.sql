-- The gateway's tokens live in the ledger, so gateways in front of one store share them.
CREATE TABLE IF NOT EXISTS api_tokens (
    name text NOT NULL PRIMARY KEY,
    scope text NOT NULL,
    token_hash text NOT NULL,
    created_at text,
    last_used_at text
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_api_tokens_hash ON api_tokens (token_hash);
