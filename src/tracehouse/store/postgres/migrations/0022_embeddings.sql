-- Search by meaning: the vectors of the ledger's passages, made by the sync after its rows are
-- committed (`search/postgres_vectors.py`); empty until a model embeds them. A row is done
-- when `embedded_rows` holds it with the fingerprint it was embedded at.
CREATE TABLE IF NOT EXISTS embedding_state (
    id    integer PRIMARY KEY CHECK (id = 1),
    model text NOT NULL,
    dims  integer NOT NULL,
    -- false from the start of an embedding until it found nothing left: a sync that wrote
    -- nothing counts the backlog only then
    complete boolean NOT NULL DEFAULT false
);
CREATE TABLE IF NOT EXISTS embedded_rows (
    source_table text NOT NULL,
    row_id       text NOT NULL,
    fingerprint  text,
    PRIMARY KEY (source_table, row_id)
);
CREATE TABLE IF NOT EXISTS embedded (
    source   text NOT NULL,
    row_id   text NOT NULL,
    part     integer NOT NULL,
    text_key bigint NOT NULL,
    PRIMARY KEY (source, row_id, part)
);
CREATE INDEX IF NOT EXISTS idx_embedded_key ON embedded (text_key);
CREATE TABLE IF NOT EXISTS embedding_keys (
    text_key bigint PRIMARY KEY,
    block    bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS embedding_blocks (
    block   bigserial PRIMARY KEY,
    keys    bytea NOT NULL,
    vectors bytea NOT NULL
);
