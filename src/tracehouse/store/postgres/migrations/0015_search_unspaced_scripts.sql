-- Chinese, Japanese, Thai, … are searched a character a word (`search/scripts.py`): the rows
-- holding such text get their search vectors again, from words prepared in Python
-- (`search/postgres_words.segment_scripts`, run by `migrations.PYTHON_STEPS` after this file).
-- Nothing changes in the tables' shape.
SELECT 1;
