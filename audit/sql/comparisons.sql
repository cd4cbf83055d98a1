-- One row per parsed comparative call between two different candidates of pool $pool_id: the cell
-- (judge, format, decoding), the prompt, the pair's candidates x and y in the item's orientation
-- (x = the anchored candidate, or the earlier-listed one; y = its anchor or the later one), whether
-- the call showed them reversed (`swapped`: y in slot A), and the margin in favour of slot A.
SELECT j.name AS judge, f.name AS format, v.decoding, v.prompt_idx::BIGINT AS prompt_idx,
       (CASE WHEN v.swapped THEN v.b_idx ELSE v.a_idx END)::BIGINT AS x,
       (CASE WHEN v.swapped THEN v.a_idx ELSE v.b_idx END)::BIGINT AS y,
       v.swapped, v.value::DOUBLE AS value
FROM verdicts v
JOIN judges j USING (judge_id)
JOIN formats f USING (format_id)
WHERE v.pool_id = $pool_id AND f.kind = 'comparative' AND v.a_idx <> v.b_idx
  AND v.value IS NOT NULL
ORDER BY j.name, f.name, v.decoding, v.prompt_idx, x, y, v.swapped, v.sample
