-- Every provider's tokens in the schema's one convention: input holds the cache reads and
-- writes, output holds the reasoning, total = input + output (`store/token_convention.py`, run
-- by `migrations.PYTHON_STEPS` after this file: the counts are converted and each turn's
-- fingerprint taken again in Python). Nothing changes in the tables' shape.
SELECT 1;
