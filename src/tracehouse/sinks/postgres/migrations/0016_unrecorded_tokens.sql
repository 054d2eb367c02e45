-- Token counts no agent recorded become NULL instead of 0 (`sinks/unrecorded.py`, run by
-- `migrations.PYTHON_STEPS` after this file: a turn's fingerprint is taken again in Python).
-- Nothing changes in the tables' shape.
SELECT 1;
