-- Every judge call when no file is attached: one row per stored call (the verdicts table), with every column
-- (verdict_source_all) and with what the audit scores it by alone (verdict_values_all); verdict_source and
-- verdict_values read them.
CREATE OR REPLACE TEMP VIEW verdict_source_all AS SELECT * FROM verdicts;
CREATE OR REPLACE TEMP VIEW verdict_values_all AS
SELECT pool_id, judge_id, format_id, decoding, sample, prompt_idx, a_idx, b_idx, swapped, value, expected
FROM verdicts;
