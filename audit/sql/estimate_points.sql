-- One pointwise cell's parsed calls (an estimate's predictions, audit/_worth_cells.py): the candidate
-- a_idx and the normalised score x = (value - value_lo) / (value_hi - value_lo), one row per call
-- (every sample); no row where the format has no scale (value_hi <= value_lo).
SELECT v.a_idx, (v.value - f.value_lo) / (f.value_hi - f.value_lo) AS x
FROM verdict_values v JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND v.judge_id = $judge_id AND v.format_id = $format_id AND v.decoding = $decoding
  AND v.value IS NOT NULL AND f.value_hi > f.value_lo
