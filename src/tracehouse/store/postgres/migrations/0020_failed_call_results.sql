-- A failed call's output in `result` too, as Claude Code and Codex record it
-- (`store/failed_calls.py`, run by `migrations.PYTHON_STEPS` after this file, which prepares the
-- rows' search vectors again). Nothing changes in the tables' shape.
SELECT 1;
