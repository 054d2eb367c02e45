-- Where each export went last, and when: `export --since-last` writes only what changed.
CREATE TABLE IF NOT EXISTS export_marks (
    target text NOT NULL,
    format text NOT NULL,
    exported_at text,
    sessions bigint,
    PRIMARY KEY (target, format)
);
