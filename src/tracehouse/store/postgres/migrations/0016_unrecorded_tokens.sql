-- Token counts and times no agent recorded become NULL, not 0 or a file's modification time
-- (`store/unrecorded.py`, run by `migrations.PYTHON_STEPS` after this file: a turn's
-- fingerprint is taken again in Python). Nothing changes in the tables' shape.
SELECT 1;
