-- Every judge call when no file is attached: one row per stored call (the verdicts table), with its prompt and
-- candidates (verdict_source_all) and without them (verdict_calls_all); verdict_source and verdict_calls read them.
CREATE OR REPLACE TEMP VIEW verdict_source_all AS SELECT * FROM verdicts;
CREATE OR REPLACE TEMP VIEW verdict_calls_all AS SELECT * EXCLUDE (prompt_idx, a_idx, b_idx, swapped) FROM verdicts;
