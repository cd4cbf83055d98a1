-- One row per parsed sample-0 call between two candidates of the tournament cells the caller registers as
-- `tournament_cells` (judge_id, format_id, decoding, cell: its number): the cell, the pair's candidates
-- (lo_idx < hi_idx) and the call's preference turned toward lo_idx (s: +1 lo preferred, -1 hi, 0 a tie).
-- Integers only, unordered: the caller groups the calls by prompt and pair (audit._intransitive).
SELECT c.cell::INTEGER AS cell, least(v.a_idx, v.b_idx)::INTEGER AS lo_idx,
       greatest(v.a_idx, v.b_idx)::INTEGER AS hi_idx,
       (sign(v.value) * CASE WHEN v.a_idx < v.b_idx THEN 1 ELSE -1 END)::TINYINT AS s
FROM verdict_source v
JOIN tournament_cells c USING (judge_id, format_id, decoding)
WHERE v.pool_id = $pool_id AND v.sample = 0 AND v.value IS NOT NULL AND v.a_idx <> v.b_idx
