-- One comparative cell's parsed calls on two distinct candidates (an estimate's predictions,
-- audit/_worth_cells.py): the pair as (lo_idx, hi_idx) and x = 1 / 0.5 / 0 as the call's margin
-- favours lo_idx / ties / favours hi_idx, one row per call (either order, every sample).
SELECT least(a_idx, b_idx) AS lo_idx, greatest(a_idx, b_idx) AS hi_idx,
       (CASE WHEN value = 0 THEN 0.5 WHEN (value > 0) = (a_idx < b_idx) THEN 1.0 ELSE 0.0 END)::DOUBLE AS x
FROM verdict_values
WHERE pool_id = $pool_id AND judge_id = $judge_id AND format_id = $format_id AND decoding = $decoding
  AND a_idx <> b_idx AND value IS NOT NULL
