"""The PostgreSQL session store (psycopg 3): a team's shared ledger."""
