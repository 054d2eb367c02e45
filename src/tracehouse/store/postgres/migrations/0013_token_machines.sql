-- A push token is bound to the machine it was issued for (a token named after a machine name
-- keeps that name; any other must be issued again with --machine).
ALTER TABLE api_tokens ADD COLUMN IF NOT EXISTS machine text;
UPDATE api_tokens SET machine = name
 WHERE scope = 'push' AND machine IS NULL AND name ~ '^[A-Za-z0-9._-]{1,64}$';
