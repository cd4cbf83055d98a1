-- The candidates one pointwise cell scored (an estimate's items without a label need no more: their
-- count): a_idx, one row per parsed call (every sample); as estimate_points.sql without the score.
SELECT v.a_idx
FROM verdict_values v JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND v.judge_id = $judge_id AND v.format_id = $format_id AND v.decoding = $decoding
  AND v.value IS NOT NULL AND f.value_hi > f.value_lo
