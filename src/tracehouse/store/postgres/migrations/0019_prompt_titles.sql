-- A title for every session that has a prompt, from the prompts the ledger holds
-- (`store/prompt_titles.py`, run by `migrations.PYTHON_STEPS` after this file). Nothing changes
-- in the tables' shape.
SELECT 1;
