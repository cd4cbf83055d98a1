-- One row per parsed sample of a repeated judge call of one (judge, format, decoding) cell of the
-- pool (the cell's `mean` aggregate): the candidates in slot A and B (-1 for pointwise formats),
-- whether the call is the reverse orientation of its item, the parsed value (or, with $expected,
-- the probability-weighted value over the labels), and the weight 1 / (the call's parsed samples),
-- so that each call counts once, with the mean of its samples. Only the prompts $prompt_lo..$prompt_hi.
SELECT a_idx, coalesce(b_idx, -1) AS b_idx, swapped,
       CASE WHEN $expected THEN expected ELSE value END AS value,
       1.0 / count(*) OVER (PARTITION BY a_idx, coalesce(b_idx, -1)) AS weight
FROM verdict_values
WHERE pool_id = $pool_id AND judge_id = $judge_id AND format_id = $format_id AND decoding = $decoding
  AND prompt_idx BETWEEN $prompt_lo AND $prompt_hi
  AND (CASE WHEN $expected THEN expected ELSE value END) IS NOT NULL
ORDER BY a_idx, b_idx, sample
