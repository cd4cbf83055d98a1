-- One row per parsed judge call of one (judge, format, decoding) cell of the pool: the candidates
-- in slot A and B (-1 for pointwise formats), whether the call is the reverse orientation of its
-- item, and the parsed value (or, with $expected, the probability-weighted value over the labels).
-- Sample 0 only: the cell's `single` aggregate (cell_sample_values.sql reads every sample). Only the
-- prompts $prompt_lo..$prompt_hi: the audit reads a pool in blocks of whole prompts.
SELECT a_idx, coalesce(b_idx, -1) AS b_idx, swapped,
       CASE WHEN $expected THEN expected ELSE value END AS value
FROM verdict_values
WHERE pool_id = $pool_id AND judge_id = $judge_id AND format_id = $format_id AND decoding = $decoding
  AND prompt_idx BETWEEN $prompt_lo AND $prompt_hi
  AND (CASE WHEN $expected THEN expected ELSE value END) IS NOT NULL
  AND sample = 0
